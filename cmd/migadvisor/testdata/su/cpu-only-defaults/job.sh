#!/bin/bash
#SBATCH --time=30
hostname
