#!/bin/sh
# Rebuild the article's derived raster images and its audio clip from committed sources.
# Needs Debian's imagemagick, espeak-ng and sox (apt-get install -y imagemagick espeak-ng sox).
# Run from the repository root after `python3 tests/article/gen_assets.py`.
set -eu
cd "$(dirname "$0")/../.."
img=assets/images
convert "$img/cluster-hero.png" -quality 82 "$img/cluster-hero.webp"
convert "$img/bubble-heatmap.png" -filter point -resize 200% -quality 88 "$img/bubble-heatmap.jpg"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
espeak-ng -v en-us -s 160 -w "$tmp/intro.wav" \
  "Training a large language model is a memory problem first and a compute problem second. This article walks through where the bytes go, and how a cluster of GPUs shares them."
mkdir -p assets/audio
sox "$tmp/intro.wav" -r 22050 -C 3 "assets/audio/read aloud, intro.ogg"
ls -l "$img"/cluster-hero.webp "$img"/bubble-heatmap.jpg "assets/audio/read aloud, intro.ogg"
