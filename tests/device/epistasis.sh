# GPU check of the epistasis search end to end (TAP): the planted pair and quad of
# tests/epistasis_planted.sh must come first when every round runs on the CUDA workers
# (--ncpu 0). tests/device/run runs it with TG_BIN set; test_epistasis compares the CUDA and
# CPU rounds bit for bit.
EPI_ARGS="--ncpu 0" exec bash "$(dirname "$0")/../epistasis_planted.sh"
