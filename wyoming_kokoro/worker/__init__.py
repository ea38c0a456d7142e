"""The heavy process: started per burst (`python -m wyoming_kokoro.worker`), it loads
the model, speaks the messages of `protocol.py` and exits when the server closes its
stdin. `zygote.py` is the waiting parent of `--prefork`.
"""
