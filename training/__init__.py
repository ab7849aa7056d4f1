"""Training: configuration checks, the paper's schedule and loss, tf.distribute, the loop."""
