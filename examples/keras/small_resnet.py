"""The demo's model and data: a small ResNet and synthetic stripe images in 4 classes.

One module for examples/keras/train_resnet.py and bench/keras (which also runs it on PlaidML 0.7
with Keras 2.2.4): it imports no Tessera, and uses only what Keras 2.2.4 and 2.3.1 both have
(`K.int_shape`, not `int(x.shape[-1])`, which PlaidML's tensors lack).
"""
import numpy as np
import keras
from keras import backend as K
from keras import layers


def synthetic_images(count, size=100, classes=4, seed=0):
    """Images whose class is the orientation of a faint stripe pattern under noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, count)
    yy, xx = np.mgrid[0:size, 0:size] / size
    angles = np.pi * np.arange(classes) / classes
    patterns = np.stack([np.sin(2 * np.pi * 6 * (np.cos(a) * xx + np.sin(a) * yy)) for a in angles])
    images = 0.5 * patterns[labels][..., None] + rng.normal(0, 0.5, (count, size, size, 3))
    return images.astype(np.float32), keras.utils.to_categorical(labels, classes)


def residual_block(x, filters, stride):
    shortcut = x
    y = layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
    y = layers.BatchNormalization()(y)
    y = layers.Activation("relu")(y)
    y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
    y = layers.BatchNormalization()(y)
    if stride != 1 or K.int_shape(x)[-1] != filters:
        shortcut = layers.Conv2D(filters, 1, strides=stride, use_bias=False)(x)
        shortcut = layers.BatchNormalization()(shortcut)
    return layers.Activation("relu")(layers.add([y, shortcut]))


def small_resnet(classes=4):
    inputs = layers.Input((100, 100, 3))
    x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    for filters, stride in ((16, 1), (32, 2), (32, 1), (64, 2)):
        x = residual_block(x, filters, stride)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.models.Model(inputs, layers.Dense(classes, activation="softmax")(x))


def sgd(lr=0.05, momentum=0.9):
    """The demo's optimizer: Keras 2.3.1 names the rate `learning_rate`, Keras 2.2.4 `lr`."""
    if "learning_rate" in keras.optimizers.SGD.__init__.__code__.co_varnames:
        return keras.optimizers.SGD(learning_rate=lr, momentum=momentum)
    return keras.optimizers.SGD(lr=lr, momentum=momentum)


def accuracy(logs):
    """The accuracy in an epoch's logs: Keras 2.3.1 names it `accuracy`, Keras 2.2.4 `acc`."""
    return logs["accuracy"] if "accuracy" in logs else logs["acc"]
