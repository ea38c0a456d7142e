"""Text to PCM on onnxruntime: the engine, the model session, the cut model decoded in
windows, loudness. Runs in the worker and in `kokoro-say`, never in the server."""
