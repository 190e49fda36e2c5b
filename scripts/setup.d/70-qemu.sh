# shellcheck shell=bash
# Installs QEMU's user-mode emulators from Debian's packages if missing:
# the arm64 kernels (encoder/internal/tensor's q8_arm64.s, NEON's SDOT)
# are tested on this amd64 machine by running the arm64 test binaries
# under qemu-aarch64 (-cpu max: every Armv8 feature, SDOT among them).
# Sourced by scripts/test-all.sh; safe to run again. On failure it says
# why; the arm64 step then fails under CI=true.
#
# Run it alone with:  source scripts/setup.d/70-qemu.sh

capbroker_qemu_setup() {
	if command -v qemu-aarch64 >/dev/null 2>&1; then
		echo "qemu: $(qemu-aarch64 --version 2>/dev/null | head -1)"
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "qemu: not installed; run as root or: sudo apt-get install -y qemu-user" >&2
		return 1
	fi
	echo "qemu: installing qemu-user from Debian packages"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq &&
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends qemu-user >/dev/null || return 1
	command -v qemu-aarch64 >/dev/null 2>&1 || { echo "qemu: installed, but qemu-aarch64 is not on PATH" >&2; return 1; }
	echo "qemu: $(qemu-aarch64 --version 2>/dev/null | head -1)"
}

capbroker_qemu_setup || echo "qemu: setup failed; the arm64 tests will not run (and fail under CI=true)" >&2
unset -f capbroker_qemu_setup
