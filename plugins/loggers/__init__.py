"""Built-in metric loggers (TensorBoard, trackio, wandb) behind optional extras."""
