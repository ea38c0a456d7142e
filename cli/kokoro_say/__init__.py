"""kokoro-say: offline Kokoro text to speech to audio files."""
