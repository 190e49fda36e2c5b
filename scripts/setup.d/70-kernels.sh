# shellcheck shell=bash
# Installs what the encoder's kernel tests need beyond Go, from Debian's
# packages, if missing:
#   - QEMU's user-mode emulators (qemu-user): the arm64 kernels
#     (encoder/internal/tensor's *_arm64.s, NEON) are tested on this amd64
#     machine by running the arm64 test binaries under qemu-aarch64 (-cpu
#     max: every Armv8 feature, SDOT among them);
#   - GNU binutils (objdump, as): TestAVXVNNIEncoding disassembles the
#     amd64 kernels an AVX-VNNI CPU runs and checks their VEX bytes.
# Sourced by scripts/test-all.sh; safe to run again. On failure it says
# why; the tests that need them then fail under CI=true.
#
# Run it alone with:  source scripts/setup.d/70-kernels.sh

capbroker_kernels_setup() {
	local missing=()
	command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)
	{ command -v objdump >/dev/null 2>&1 && command -v as >/dev/null 2>&1; } || missing+=(binutils)
	if [ ${#missing[@]} -gt 0 ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "kernels: ${missing[*]} not installed; run as root or: sudo apt-get install -y ${missing[*]}" >&2
			return 1
		fi
		echo "kernels: installing ${missing[*]} from Debian packages"
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
	fi
	command -v qemu-aarch64 >/dev/null 2>&1 || { echo "kernels: qemu-aarch64 is not on PATH" >&2; return 1; }
	{ command -v objdump >/dev/null 2>&1 && command -v as >/dev/null 2>&1; } || { echo "kernels: objdump or as is not on PATH" >&2; return 1; }
	echo "kernels: $(qemu-aarch64 --version 2>/dev/null | head -1); $(objdump --version 2>/dev/null | head -1)"
}

capbroker_kernels_setup || echo "kernels: setup failed; the arm64 and encoding tests will not run (and fail under CI=true)" >&2
unset -f capbroker_kernels_setup
