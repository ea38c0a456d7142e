"""wyoming-kokoro: Kokoro-82M text to speech over the Wyoming protocol."""

__version__ = "0.1.0"
