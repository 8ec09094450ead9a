#!/usr/bin/env python3
"""Image-classification training for migadvisor's reference workloads.

Three of the Wulver MIG benchmarks in one harness: a simple CNN on MNIST, a
deep CNN (conv-BN-ReLU blocks) and a ResNet on CIFAR-10. It trains, tests and
prints what migadvisor reads from a job's output:

    MIGADVISOR_WORK <samples trained> samples
    MIGADVISOR_METRIC <name> <value>     training_time_s, test_accuracy_pct, ...
    MIGADVISOR_VERSION <name> <value>    python, torch, cuda, device

Images reach the model as in a usual training script: a DataLoader with
--workers worker processes turns each stored 8-bit image into a normalized
tensor (and, for CIFAR-10's training set, crops and flips it at random), on
the job's CPUs, while the GPU trains. That CPU work is part of the job's
time on every profile, as it is on Wulver's. --preload transforms every image
once, before training, instead.

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
    """Random 8-bit images of the dataset's shape, labelled by a fixed random
    projection of their coarse (4x4) structure, which a CNN can learn."""
    c, h, w, _, _ = SHAPES[dataset]
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(n_train + n_test, c, h, w, generator=g) * 64 + 128).clamp_(0, 255).to(torch.uint8)
    coarse = F.adaptive_avg_pool2d(x.float(), 4).flatten(1)
    proj = torch.randn(coarse.shape[1], 10, generator=g)
    y = ((coarse - coarse.mean(0)) @ proj).argmax(1)
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def real(dataset, data_dir, n_train, n_test):
    """The real dataset through torchvision (downloaded to data_dir once), as
    8-bit images (N, C, H, W) and labels."""
    try:
        import torchvision
    except ImportError:
        sys.exit("vision_train.py: torchvision is needed to download %s; install it or use --synthetic" % dataset)
    cls = {"mnist": torchvision.datasets.MNIST, "cifar10": torchvision.datasets.CIFAR10}[dataset]
    out = []
    for train, n in ((True, n_train), (False, n_test)):
        ds = cls(data_dir, train=train, download=True)
        x = torch.as_tensor(ds.data)[:n]  # MNIST: (N, 28, 28); CIFAR-10: (N, 32, 32, 3)
        x = x.unsqueeze(1) if x.dim() == 3 else x.permute(0, 3, 1, 2)
        out.append((x.contiguous(), torch.as_tensor(ds.targets)[:n].long()))
    return out[0], out[1]


class Images(torch.utils.data.Dataset):
    """8-bit images made into normalized tensors one at a time, as
    torchvision's ToTensor and Normalize do; augment adds the usual CIFAR-10
    training augmentation (a random 32x32 crop of the image padded by 4, a
    random horizontal flip)."""

    def __init__(self, x, y, augment):
        self.x, self.y, self.augment = x, y, augment

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        img = self.x[i].float().div_(255).sub_(0.5).div_(0.5)
        if self.augment:
            _, h, w = img.shape
            padded = F.pad(img, (4, 4, 4, 4))
            top, left = torch.randint(0, 9, (2,)).tolist()
            img = padded[:, top:top + h, left:left + w]
            if torch.rand(()) < 0.5:
                img = img.flip(2)
        return img, self.y[i]


def loader(x, y, size, shuffle, augment, workers, seed, pin):
    g = torch.Generator().manual_seed(seed)
    return torch.utils.data.DataLoader(Images(x, y, augment), batch_size=size, shuffle=shuffle, generator=g,
                                       num_workers=workers, pin_memory=pin, persistent_workers=workers > 0)


def preloaded(x, y, size, shuffle, seed):
    """Every image transformed once, then batches of the resulting tensors."""
    x = x.float().div_(255).sub_(0.5).div_(0.5)
    g = torch.Generator().manual_seed(seed)

    class Batches:
        def __iter__(self):
            order = torch.randperm(len(x), generator=g) if shuffle else torch.arange(len(x))
            for i in range(0, len(x), size):
                idx = order[i:i + size]
                yield x[idx], y[idx]

    return Batches()


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
    ap.add_argument("--workers", type=int, default=1, help="DataLoader worker processes (0: in the training process)")
    ap.add_argument("--preload", action="store_true", help="transform every image once before training, no DataLoader")
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

    pin = device == "cuda"
    if a.preload:
        train_batches = preloaded(xtr, ytr, a.batch_size, True, a.seed)
        test_batches = preloaded(xte, yte, 1000, False, a.seed)
    else:
        train_batches = loader(xtr, ytr, a.batch_size, True, a.dataset == "cifar10", a.workers, a.seed, pin)
        test_batches = loader(xte, yte, 1000, False, False, a.workers, a.seed, pin)
    workers = "%d worker%s" % (a.workers, "" if a.workers == 1 else "s")
    print("MIGADVISOR_VERSION loader %s" % ("preloaded" if a.preload else "DataLoader, " + workers))

    model = MODELS[a.model](c, h).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    trained = 0
    for epoch in range(1, a.epochs + 1):
        model.train()
        total = 0.0
        for xb, yb in train_batches:
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
        for xb, yb in test_batches:
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
