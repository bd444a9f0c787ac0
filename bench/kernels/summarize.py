"""Google Benchmark's JSON from bench/kernels/run.sh → a markdown table: per row the median time,
GFLOP/s, the share of the FMA peak measured in the same process, and Tessera's time over its
peer's (below 1: Tessera is faster) for the same size; for the KernelChain rows on opencl:0,
Tessera's time over the OpenCL driver's own for the same chain."""
import json
import sys

# Tessera's rows and the peer each is held against, on the same device.
PEERS = {
    "Sgemm_Tessera": "Sgemm_OpenBLAS",
    "Sgemm_TesseraTuned": "Sgemm_OpenBLAS",
    "Conv_Tessera": "Conv_OneDNN",
    "Conv_TesseraTuned": "Conv_OneDNN",
    "Sgemm_Tessera_OpenCL": "Sgemm_CLBlast",
    "Sgemm_Tessera_OpenCLTuned": "Sgemm_CLBlast",
}


def peer_of(family, arg):
    """The row Tessera's row `family/arg` is held against, if any. KernelChain_Tessera/D/N (device
    D: 0 cpu, 1 opencl:0, 2 vulkan:0; N kernels) has a peer on opencl:0 only: the OpenCL driver
    running the same chain alone, KernelChain_OpenCLDriver/N."""
    if family == "KernelChain_Tessera":
        device, _, kernels = arg.partition("/")
        return f"KernelChain_OpenCLDriver/{kernels}" if device == "1" else None
    if family not in PEERS:
        return None
    return f"{PEERS[family]}/{arg}" if arg else PEERS[family]


def medians(report):
    rows = {}
    for b in report["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        name = b["run_name"].removeprefix("BM_").split("/real_time")[0]
        rows[name] = b
    return rows


def milliseconds(b):
    return b["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]


def main(path):
    report = json.load(open(path))
    rows = dict(sorted(medians(report).items()))
    ctx = report["context"]
    reps = next(iter(rows.values()), {}).get("repetitions", "?")
    print(f"host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz, "
          f"{ctx.get('date')}; medians of {reps} interleaved repetitions\n")
    print("| benchmark | median ms | GFLOP/s | share of FMA peak | Tessera / peer |")
    print("|---|---|---|---|---|")
    for name, b in rows.items():
        family, _, arg = name.partition("/")
        ms = milliseconds(b)
        gflops = b.get("items_per_second", 0) / 1e9
        peak = b.get("of_peak")
        ratio = ""
        peer = rows.get(peer_of(family, arg) or "")
        if peer:
            ratio = f"{ms / milliseconds(peer):.2f}"
        print(f"| {name} | {ms:.4g} | {f'{gflops:.1f}' if gflops else ''} | {f'{peak:.0%}' if peak else ''} | {ratio} |")


if __name__ == "__main__":
    main(sys.argv[1])
