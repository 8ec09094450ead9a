#!/bin/bash
#SBATCH --gres=gpu:v100:1
run
