"""Your code: one folder per lesson. Run `pytest exercises/NN_topic` to check a lesson."""
