"""The machinery that runs stages, apart from what they compute: the content-addressed store, the
process pool, shards and the external sort, the Ray engine, and the generic stage runner. No
domain module imports this package; stages receive frames, never the runtime."""
