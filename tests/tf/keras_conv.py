"""tests/tf/keras_conv.py - a small Keras Conv2D model, 2 training steps
(make test-tf runs it with and without the shim and compares).

stdout: what the program computed, rounded so that it is the same from run
to run (no timings, no progress bar).  With CG_MAPS_OUT=FILE, the sorted
shared objects mapped at the end go to FILE, one path a line."""
import os
import sys

import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
print("tensorflow", tf.__version__)
print("gpus", [d.device_type for d in tf.config.list_physical_devices("GPU")])
x = np.random.RandomState(0).rand(8, 16, 16, 3).astype("float32")
y = np.random.RandomState(1).rand(8, 1).astype("float32")
model = tf.keras.Sequential([
    tf.keras.Input(shape=(16, 16, 3)),
    tf.keras.layers.Conv2D(4, 3, activation="relu"),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(1),
])
model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
hist = model.fit(x, y, batch_size=4, epochs=1, steps_per_epoch=2, verbose=0, shuffle=False)
print("steps", int(model.optimizer.iterations.numpy()), "loss %.4f" % hist.history["loss"][-1])
print("prediction %.4f" % float(model.predict(x[:1], verbose=0)[0, 0]))
sys.stdout.flush()
out = os.environ.get("CG_MAPS_OUT")
if out:
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and ".so" in parts[5]:
                paths.add(os.path.realpath(parts[5]))
    with open(out, "w") as f:
        f.write("".join(p + "\n" for p in sorted(paths)))
