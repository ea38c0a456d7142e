"""The Wyoming door: one handler per connection, careful event reading, `info`."""
