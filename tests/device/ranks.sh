# MPI ranks that drive GPUs: the MPI tests of the CPU suite (tests/mpi_*.sh: every workload on 2
# and 4 ranks equals the run without mpiexec — KRR predictions within the map's bound, epistasis
# files identical, products within 1e-12, the GRM byte for byte) run here with the GPUs as
# workers, so 2 or 4 ranks share the node's GPUs (tilegwas gives rank r of a node the devices
# d ≡ r mod R, or shares a device among several ranks with its memory split) and their cores.
# Skipped when pack found no mpiexec. Takes minutes: tests/device/run gives it three times the
# usual limit.
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../tap.sh"
skip_without_mpi
here=$(mktemp -d)
trap 'rm -rf "$here"' EXIT
for t in mpi_snpmm mpi_krr mpi_epistasis; do
    mkdir -p "$here/$t" && cd "$here/$t" || exit 1
    echo "# $t"
    bash "$TG_SRCDIR/tests/$t.sh" | grep -v '^1\.\.'
    cd "$here" || exit 1
done
