# GPU check of the epistasis search end to end (TAP): the planted pair and quad of
# tests/epistasis_planted.sh, and the K2 on incomplete data of tests/epistasis_missing.sh (ln BF
# against the awk reference, no correlation with N on null data, planted pair and triple first
# among high-missingness SNPs), when every round runs on the CUDA workers (--ncpu 0).
# tests/device/run runs it with TG_BIN set; test_epistasis compares the CUDA and CPU rounds bit
# for bit.
here=$(dirname "$0")
EPI_ARGS="--ncpu 0" bash "$here/../epistasis_planted.sh"
rc=$?
EPI_ARGS="--ncpu 0" bash "$here/../epistasis_missing.sh" || rc=1
exit $rc
