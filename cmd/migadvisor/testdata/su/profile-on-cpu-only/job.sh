#!/bin/bash
#SBATCH -p gpu -t 1:00:00
run
