"""Tables: CSV, JSON lines and Parquet files read in chunks as dicts, and written as sinks."""
