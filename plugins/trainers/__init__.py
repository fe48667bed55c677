"""Built-in trainers."""
