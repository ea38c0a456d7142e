"""Helpers the tests share: real servers and workers, the recognizer, audio distances,
the in-memory worker. Test modules import helpers from here, never from each other."""
