"""The model files: which ones exist, where they are found, how they are fetched and
checked."""
