from peft import LoraConfig
import torch
