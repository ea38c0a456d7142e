"""The light process: listeners, discovery, the scheduler and its handle on a worker.

Nothing here imports numpy, onnxruntime or the synthesis and worker packages
(tests/project/test_boundary.py): the server stays small while no one is speaking.
"""
