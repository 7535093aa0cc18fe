"""The store's file formats, one module per format: Kernel Tuner caches (``kt_cache``), T4
results (``t4``), T1 and BAT CAFF search spaces (``search_space``), CSV and JSON export
(``tabular``); ``importing`` turns a cache or T4 file into a stored campaign. Import the
module you need: nothing is imported here, so reading one format loads no other."""
