"""`make bench`: speed and size of the model, the build and the pages, as ratios against references
measured in the same run. Benchmarks report; nothing here gates CI on machine speed."""
