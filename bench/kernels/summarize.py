"""Google Benchmark's JSON from bench/kernels/run.sh → a markdown table: per row the median time,
GFLOP/s, the share of the FMA peak measured in the same process, and Tessera's time over its
peer's (below 1: Tessera is faster) for the same size."""
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


def medians(report):
    rows = {}
    for b in report["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        name = b["run_name"].removeprefix("BM_").split("/real_time")[0]
        rows[name] = b
    return rows


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
        ms = b["real_time"] if b["time_unit"] == "ms" else b["real_time"] / 1e6
        gflops = b.get("items_per_second", 0) / 1e9
        peak = b.get("of_peak")
        ratio = ""
        peer = rows.get(f"{PEERS[family]}/{arg}" if arg else PEERS.get(family, "")) if family in PEERS else None
        if peer:
            peer_ms = peer["real_time"] if peer["time_unit"] == "ms" else peer["real_time"] / 1e6
            ratio = f"{ms / peer_ms:.2f}"
        print(f"| {name} | {ms:.3f} | {gflops:.1f} | {f'{peak:.0%}' if peak else ''} | {ratio} |")


if __name__ == "__main__":
    main(sys.argv[1])
