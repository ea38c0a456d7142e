"""Text before the model: pieces and phrases, SSML, character classes, written forms
to words (`normalize/`) and words to phonemes (`g2p/`). The server uses the light
parts (pieces, SSML, languages); normalization and G2P run in the worker."""
