#!/usr/bin/python3
"""Prints the shape profile of a large model saving every layer (bench/profiles/README.md): a
250-layer transformer whose hook saves each layer's 16 parameters, their 16 gradients and 8
activations, 10,011 tensors in all, each 3 times over 48 steps (40 TRAIN, 8 EVAL; gradients in
TRAIN only), and the loss at every step. Small layers (width 32) keep the trial near 100 MB:
what it measures is the cost per tensor, which real trials of this many tensors pay.

  bench/profiles/transformer_profile.py > transformer_10k.json
  bench/profiles/transformer_profile.py --layers 8   (a smaller model of the same shape, for tests)
"""
import argparse
import json

LAYERS, WIDTH, FFN, BATCH, SEQ = 250, 32, 64, 2, 16
SAVES = 3


def tensor(name, shape, collections, zero=0.0, p50=0.0, rng=0.1, modes=("TRAIN", "EVAL"), saved=SAVES):
    return {"name": name, "dtype": "float32", "shape": list(shape), "values_saved": saved, "modes": list(modes),
            "collections": list(collections), "mean_zero_fraction": zero, "mean_p50": p50, "mean_range": rng}


def layer(i):
    p = f"Transformer_layers.{i}."
    params = []
    for proj in ("q", "k", "v", "out"):
        params.append((f"attn.{proj}.weight", (WIDTH, WIDTH), "weights", 0.35))
        params.append((f"attn.{proj}.bias", (WIDTH,), "biases", 0.02))
    params += [("ffn.fc1.weight", (FFN, WIDTH), "weights", 0.35), ("ffn.fc1.bias", (FFN,), "biases", 0.02),
               ("ffn.fc2.weight", (WIDTH, FFN), "weights", 0.25), ("ffn.fc2.bias", (WIDTH,), "biases", 0.02)]
    for ln in ("ln1", "ln2"):
        params.append((f"{ln}.weight", (WIDTH,), "weights", 0.05))
        params.append((f"{ln}.bias", (WIDTH,), "biases", 0.02))
    out = []
    for name, shape, coll, rng in params:
        p50 = 1.0 if name.startswith("ln") and name.endswith("weight") else 0.0
        out.append(tensor(p + name, shape, [coll], p50=p50, rng=rng))
        out.append(tensor("gradient/" + p + name, shape, ["gradients"], rng=rng * 1e-3, modes=("TRAIN",)))
    a = f"layers.{i}."
    act = (BATCH, SEQ, WIDTH)
    out += [tensor(a + "attn_input_0", act, ["default"], rng=6.0), tensor(a + "attn_output_0", act, ["default"], rng=4.0),
            tensor(a + "ln1_output_0", act, ["default"], rng=6.0),
            tensor(a + "relu_input_0", (BATCH, SEQ, FFN), ["default"], rng=8.0),
            tensor(a + "relu_output_0", (BATCH, SEQ, FFN), ["default"], zero=0.5, rng=4.0),
            tensor(a + "fc2_output_0", act, ["default"], rng=3.0), tensor(a + "ln2_input_0", act, ["default"], rng=7.0),
            tensor(a + "ln2_output_0", act, ["default"], rng=6.0)]
    return out


def main():
    p = argparse.ArgumentParser(description="Prints the shape profile of a transformer saving every layer.")
    p.add_argument("--layers", type=int, default=LAYERS, help="layers (default %(default)s: 10,011 tensors)")
    layers = p.parse_args().layers
    tensors = [tensor("CrossEntropyLoss_output_0", (1,), ["losses"], p50=2.3, rng=0.0, saved=48)]
    for name, shape, coll in (("Transformer_embed.weight", (1000, WIDTH), "weights"),
                              ("Transformer_head.weight", (10, WIDTH), "weights"),
                              ("Transformer_head.bias", (10,), "biases")):
        tensors.append(tensor(name, shape, [coll], rng=0.2))
        tensors.append(tensor("gradient/" + name, shape, ["gradients"], rng=2e-4, modes=("TRAIN",)))
    tensors += [tensor("embed_output_0", (BATCH, SEQ, WIDTH), ["default"], rng=1.0),
                tensor("head_output_0", (BATCH, 10), ["default"], rng=5.0),
                tensor("head_input_0", (BATCH, WIDTH), ["default"], rng=6.0),
                tensor("softmax_output_0", (BATCH, 10), ["default"], p50=0.1, rng=0.9)]
    for i in range(layers):
        tensors += layer(i)
    tensors.sort(key=lambda t: t["name"])
    print(json.dumps({"about": "shape profile of a synthetic large model (bench/profiles/transformer_profile.py): "
                               "every layer's weights, gradients and activations, 3 saves over 48 steps",
                      "steps_per_mode": {"EVAL": 8, "TRAIN": 40}, "tensors": tensors}, indent=1))


if __name__ == "__main__":
    main()
