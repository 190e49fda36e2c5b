# Chromium from Debian's packages, for the explorer page's browser test.
if ! command -v chromium >/dev/null 2>&1; then
	echo "installing chromium"
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium >/dev/null
fi
chromium --version
