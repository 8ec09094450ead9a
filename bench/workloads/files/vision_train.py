#!/usr/bin/env python3
"""Image-classification training for migadvisor's reference workloads.

Three of the Wulver MIG benchmarks in one harness: a simple CNN on MNIST, a
deep CNN (conv-BN-ReLU blocks) and a ResNet on CIFAR-10. It trains, tests and
prints what migadvisor reads from a job's output:

    MIGADVISOR_WORK <samples trained> samples
    MIGADVISOR_METRIC <name> <value>     training_time_s, test_accuracy_pct, ...
    MIGADVISOR_VERSION <name> <value>    python, torch, cuda, device

--synthetic trains on random data of the real shapes (no download): each label
is the argmax of a fixed random projection of the image's coarse structure, so the task is
learnable and the accuracy means something, but it is not the real dataset's.
Without CUDA it runs on the CPU and says so.
"""
import argparse
import os
import platform
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("vision_train.py: PyTorch is not installed in this Python (%s); "
             "load the site's PyTorch module or activate its venv (see bench/workloads/README.md)" % sys.executable)

SHAPES = {"mnist": (1, 28, 28, 60000, 10000), "cifar10": (3, 32, 32, 50000, 10000)}


class SimpleCNN(nn.Module):
    """Two convolutions, max pooling, dropout and two dense layers."""

    def __init__(self, channels, size, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.drop1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(64 * ((size - 4) // 2) ** 2, 128)
        self.drop2 = nn.Dropout(0.5)
        self.fc2 = nn.Linear(128, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = self.drop2(F.relu(self.fc1(torch.flatten(self.drop1(x), 1))))
        return self.fc2(x)


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class DeepCNN(nn.Module):
    """Three stages of two conv-BN-ReLU blocks, each halving the image."""

    def __init__(self, channels, size, classes=10):
        super().__init__()
        layers, cin = [], channels
        for cout in (64, 128, 256):
            layers += [conv_bn(cin, cout), conv_bn(cout, cout), nn.MaxPool2d(2)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.3),
                                        nn.Linear(256 * (size // 8) ** 2, 512), nn.ReLU(inplace=True),
                                        nn.Linear(512, classes))

    def forward(self, x):
        return self.classifier(self.features(x))


class Residual(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.skip = nn.Sequential()
        if stride != 1 or cin != cout:
            self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.skip(x))


class ResNet(nn.Module):
    """A CIFAR-sized ResNet: a stem and three stages of two residual blocks."""

    def __init__(self, channels, size, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(channels, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True))
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2)):
            blocks += [Residual(cin, cout, stride), Residual(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(256, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


MODELS = {"simplecnn": SimpleCNN, "deepcnn": DeepCNN, "resnet": ResNet}


def synthetic(dataset, n_train, n_test, seed):
    """Random images of the dataset's shape, labelled by a fixed random projection
    of their coarse (4x4) structure, which a CNN can learn."""
    c, h, w, _, _ = SHAPES[dataset]
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n_train + n_test, c, h, w, generator=g)
    coarse = F.adaptive_avg_pool2d(x, 4).flatten(1)
    proj = torch.randn(coarse.shape[1], 10, generator=g)
    y = (coarse @ proj).argmax(1)
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def real(dataset, data_dir, n_train, n_test):
    """The real dataset through torchvision (downloaded to data_dir once), as tensors."""
    try:
        import torchvision
        import torchvision.transforms as T
    except ImportError:
        sys.exit("vision_train.py: torchvision is needed to download %s; install it or use --synthetic" % dataset)
    cls = {"mnist": torchvision.datasets.MNIST, "cifar10": torchvision.datasets.CIFAR10}[dataset]
    tf = T.Compose([T.ToTensor(), T.Normalize((0.5,) * SHAPES[dataset][0], (0.5,) * SHAPES[dataset][0])])
    out = []
    for train, n in ((True, n_train), (False, n_test)):
        ds = cls(data_dir, train=train, download=True, transform=tf)
        n = min(n, len(ds))
        xs = torch.stack([ds[i][0] for i in range(n)])
        ys = torch.tensor([int(ds[i][1]) for i in range(n)])
        out.append((xs, ys))
    return out[0], out[1]


def batches(x, y, size, shuffle, g):
    order = torch.randperm(len(x), generator=g) if shuffle else torch.arange(len(x))
    for i in range(0, len(x), size):
        idx = order[i:i + size]
        yield x[idx], y[idx]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=sorted(MODELS), required=True)
    ap.add_argument("--dataset", choices=sorted(SHAPES), required=True)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--train-samples", type=int, default=0, help="0: the whole training set")
    ap.add_argument("--test-samples", type=int, default=0, help="0: the whole test set")
    ap.add_argument("--data", default="data", help="where the real dataset is downloaded")
    ap.add_argument("--synthetic", action="store_true", help="random data of the real shapes, no download")
    ap.add_argument("--device", default="auto", help="auto (CUDA when there is one), cuda or cpu")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    c, h, _, n_train, n_test = SHAPES[a.dataset]
    n_train, n_test = a.train_samples or n_train, a.test_samples or n_test
    device = a.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        print("vision_train.py: no CUDA device; training on the CPU", file=sys.stderr)
    torch.manual_seed(a.seed)

    print("MIGADVISOR_VERSION python %s" % platform.python_version())
    print("MIGADVISOR_VERSION torch %s" % torch.__version__)
    if device == "cuda":
        print("MIGADVISOR_VERSION cuda %s" % torch.version.cuda)
        print("MIGADVISOR_VERSION device %s" % torch.cuda.get_device_name(0))
    else:
        print("MIGADVISOR_VERSION device cpu")

    t0 = time.perf_counter()
    if a.synthetic:
        (xtr, ytr), (xte, yte) = synthetic(a.dataset, n_train, n_test, a.seed)
    else:
        (xtr, ytr), (xte, yte) = real(a.dataset, a.data, n_train, n_test)
    print("data: %d training and %d test images (%s) in %.1f s" %
          (len(xtr), len(xte), "synthetic" if a.synthetic else a.dataset, time.perf_counter() - t0), flush=True)

    model = MODELS[a.model](c, h).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    g = torch.Generator().manual_seed(a.seed)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    trained = 0
    for epoch in range(1, a.epochs + 1):
        model.train()
        total = 0.0
        for xb, yb in batches(xtr, ytr, a.batch_size, True, g):
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
            trained += len(xb)
        print("epoch %d/%d: loss %.4f" % (epoch, a.epochs, total / len(xtr)), flush=True)
    if device == "cuda":
        torch.cuda.synchronize()
    train_s = time.perf_counter() - t0

    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in batches(xte, yte, 1000, False, g):
            correct += (model(xb.to(device)).argmax(1).cpu() == yb).sum().item()
    acc = 100.0 * correct / len(xte)

    print("MIGADVISOR_WORK %d samples" % trained)
    print("MIGADVISOR_METRIC training_time_s %.3f" % train_s)
    print("MIGADVISOR_METRIC samples_per_s %.1f" % (trained / train_s))
    print("MIGADVISOR_METRIC test_accuracy_pct %.2f" % acc)
    if device == "cuda":
        print("MIGADVISOR_METRIC peak_allocated_mib %.1f" % (torch.cuda.max_memory_allocated() / 2**20))
        print("MIGADVISOR_METRIC peak_reserved_mib %.1f" % (torch.cuda.max_memory_reserved() / 2**20))


if __name__ == "__main__":
    main()
