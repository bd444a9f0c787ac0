"""A whole-pipeline differential fuzzer for Tessera: random valid Tile programs (generator.py), run
on `interp` and every compiled device (runner.py), outputs compared with dtype-aware tolerances
(compare.py), each disagreement reduced to a minimal program (reducer.py) and kept as a regression
case (cases.py). `python -m tessera_fuzz --help` runs it; docs/fuzzing.md describes it."""
