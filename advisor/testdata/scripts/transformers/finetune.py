import os
from transformers import AutoModelForCausalLM
import torch
