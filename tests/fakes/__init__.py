"""Test helpers: fakes named as such, shared set-ups (fake runs, the bundled model, built
distributions), and the path of the checkout. Never imported by the product."""
