"""A small Keras CNN to run under convguard (TensorFlow is not installed on our machines; this is for users).

    build/convguard run -- python3 examples/train_tf.py [--steps N] [--memory-growth]

TensorFlow takes nearly all GPU memory at start unless memory growth is on; with another process holding
memory this is where "Failed to get convolution algorithm. This is probably because cuDNN failed to
initialize" comes from. convguard's trace then shows cudnnCreate's status, free/total bytes and the holder.
"""
import argparse

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--memory-growth", action="store_true")
args = ap.parse_args()
import numpy as np
import tensorflow as tf

if args.memory_growth:
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
model = tf.keras.Sequential([
    tf.keras.layers.Input((64, 64, 3)),
    tf.keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
    tf.keras.layers.Conv2D(128, 3, padding="same", activation="relu"),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(10)])
model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
x = np.random.randn(args.batch * args.steps, 64, 64, 3).astype("float32")
y = np.random.randint(0, 10, args.batch * args.steps)
model.fit(x, y, batch_size=args.batch, epochs=1, verbose=2)
print("devices:", [d.name for d in tf.config.list_physical_devices()])
