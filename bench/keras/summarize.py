"""Prints run.sh's table: median epoch times per engine and device, and ratios against PlaidML.

    python3 bench/keras/summarize.py build/bench-keras/DATE/results.jsonl [--images N]

Each line of results.jsonl is one process of train_epochs.py (label "ROUND cold" or "ROUND second")
or one that failed ({"error": ...}). Standard library only: it runs under any python3.
"""
import argparse
import json
import statistics


def median(values):
    return statistics.median(values) if values else None


def seconds(value):
    return "–" if value is None else f"{value:.1f} s"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--images", type=int)
    args = parser.parse_args()

    rows = {}  # (engine, device) -> {"cold": [records], "second": [records], "errors": [...]}
    for line in open(args.results):
        record = json.loads(line)
        row = rows.setdefault((record["engine"], record["device"]),
                              {"cold": [], "second": [], "errors": []})
        if "error" in record:
            row["errors"].append(record["error"])
            continue
        row[record["label"].split()[-1]].append(record)

    epochs = max((len(r["epoch_s"]) for row in rows.values() for r in row["cold"]), default=0)
    columns = [f"epoch {i + 1}" for i in range(epochs)] + ["epoch 1, second run"]
    medians = {}
    for key, row in rows.items():
        cells = [median([r["epoch_s"][i] for r in row["cold"] if len(r["epoch_s"]) > i])
                 for i in range(epochs)]
        cells.append(median([r["epoch_s"][0] for r in row["second"]]))
        medians[key] = cells

    rounds = max((len(row["cold"]) for row in rows.values()), default=0)
    print(f"\nMedians over {rounds} round(s)"
          + (f", {args.images} images of 100x100x3, batch 16" if args.images else "") + ":\n")
    print("| engine / device | " + " | ".join(columns) + " | loss after the last epoch |")
    print("|---" * (len(columns) + 2) + "|")
    for key, cells in medians.items():
        row = rows[key]
        losses = [r["loss"][-1] for r in row["cold"]]
        loss = f"{median(losses):.3f}" if losses else "–"
        note = " (failed, below)" if row["errors"] and not row["cold"] else ""
        print(f"| {key[0]} {key[1]}{note} | " + " | ".join(seconds(c) for c in cells)
              + f" | {loss} |")

    plaidml = next((cells for (engine, _), cells in medians.items() if engine == "plaidml"), None)
    if plaidml is not None and len(medians) > 1:
        print("\nTime ÷ PlaidML's time in the same run (below 1: faster than PlaidML):\n")
        print("| engine / device | " + " | ".join(columns) + " |")
        print("|---" * (len(columns) + 1) + "|")
        for key, cells in medians.items():
            if key[0] == "plaidml":
                continue
            ratios = ["–" if c is None or p is None else f"{c / p:.2f}"
                      for c, p in zip(cells, plaidml)]
            print(f"| {key[0]} {key[1]} | " + " | ".join(ratios) + " |")

    for key, row in rows.items():
        stats = [r["compile"] for r in row["cold"] + row["second"] if r.get("compile")]
        if not stats:
            continue
        print(f"\n{key[0]} {key[1]}, epoch 1 of the last round's processes: " + "; ".join(
            f"{r['label'].split()[-1]}: {r['compile'][0]}" for r in row["cold"][-1:]
            + row["second"][-1:] if r.get("compile")))
    for key, row in rows.items():
        for error in sorted(set(row["errors"])):
            print(f"\n{key[0]} {key[1]} failed: {error}")


if __name__ == "__main__":
    main()
