"""What can be spoken with: the 54 voices, presets, and the model files (known sizes
and sha256, finding, verifying, downloading, the cut model's cache entry)."""
