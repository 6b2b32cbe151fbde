# Homebrew formula for tsapply, built from the source tarball of a tag (vVERSION). That tarball
# is `git archive` of the tag, which writes the tag's commit into BuildInfo.swift
# (export-subst), so `tsapply --version` names it as the Debian package's does.
#
# Before publishing a tag: set `url` to where the repository's tag tarballs are served (OWNER is
# a placeholder: the repository names no public home yet) and `sha256` to
# `shasum -a 256 tsapply-VERSION.tar.gz`. Not tested by the repository's CI, which runs on
# Debian without Homebrew: `brew install --build-from-source script/packaging/homebrew/tsapply.rb`
# then `brew test tsapply` checks it on a Mac.
class Tsapply < Formula
  desc "Declarative configuration reconciler for TopStep smartwatches"
  homepage "https://github.com/OWNER/tsapply"
  url "https://github.com/OWNER/tsapply/archive/refs/tags/v0.1.0.tar.gz"
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"

  depends_on xcode: ["16.0", :build]
  depends_on "pkgconf" => :build
  depends_on "libmicrohttpd"
  depends_on "libyaml"
  depends_on "mosquitto"
  depends_on "openssl@3"

  uses_from_macos "swift" => :build
  uses_from_macos "curl"

  def install
    # Linux: the Swift runtime linked in, as script/package does, so nothing needs the toolchain
    # at run time. macOS has the runtime in the system.
    args = ["--disable-sandbox", "-c", "release"]
    args << "--static-swift-stdlib" if OS.linux?
    system "swift", "build", *args, "--product", "tsapply"
    system "swift", "build", *args, "--product", "tsapply-net"
    # tsapply hands network commands to tsapply-net, which it looks for beside itself.
    bin.install ".build/release/tsapply", ".build/release/tsapply-net"

    # Man pages and completions generated from the commands' help, as script/package does.
    mkdir "man"
    system bin/"tsapply", "man-pages", "man"
    man1.install Dir["man/*.1"]
    generate_completions_from_executable(bin/"tsapply", "completion")
    pkgshare.install "examples"
  end

  def post_install
    (var/"lib/tsapply").mkpath
    (var/"lib/tsapply").chmod 0700
  end

  def caveats
    <<~EOS
      Examples are in #{opt_pkgshare}/examples.
      `brew services start tsapply` runs `tsapply monitor --reconcile` on
      #{etc}/tsapply/watch.yaml, with its records in #{var}/lib/tsapply.
    EOS
  end

  service do
    run [opt_bin/"tsapply", "monitor", "--reconcile", etc/"tsapply/watch.yaml"]
    environment_variables TSAPPLY_STATE_DIR: var/"lib/tsapply"
    working_dir var/"lib/tsapply"
    keep_alive crashed: true
    log_path var/"log/tsapply-monitor.log"
    error_log_path var/"log/tsapply-monitor.log"
  end

  test do
    assert_match(/^tsapply #{Regexp.escape(version.to_s)} \(commit [0-9a-f]{40}\)$/,
                 shell_output("#{bin}/tsapply --version"))
    ENV["TSAPPLY_STATE_DIR"] = testpath/"state"
    cp pkgshare/"examples/watch.yaml", testpath/"watch.yaml"
    system bin/"tsapply", "apply", "--auto-approve", "watch.yaml"
    assert_match "No changes.", shell_output("#{bin}/tsapply plan --detailed-exitcode watch.yaml")
    assert_match "tsapply-plan", shell_output("man -w -M #{man} tsapply-plan")
    assert_match "_tsapply", (zsh_completion/"_tsapply").read
  end
end
