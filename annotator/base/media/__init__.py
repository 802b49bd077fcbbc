"""Media ingest and serving: probe, frame tables, the annotation proxy, exact frames,
timeline thumbnails and HTTP Range responses. Pure functions over files (PyAV); the
Django layer lives in ``annotator.actions.ingest``, ``annotator.reads.media``, ``annotator.entry.media_views`` and
``annotator.entry.tasks``. See ``docs/media.md``."""
