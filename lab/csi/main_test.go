// The driver's whole life of a volume, through its gRPC API as the sidecars and kubelet call it, without a cluster:
// create 1Gi, publish (loop-mount), write, grow to 2Gi while mounted, check the filesystem and the data, unpublish,
// delete. As in the lab, the images live on an ext4 disk that is itself a loop-mounted file.
//
// Needs root, loop devices, xfsprogs and e2fsprogs; skipped otherwise. Run: cd lab/csi && go test -v .
// With LAB_CSI_BIN=<built binary> it drives that program instead of an in-process server (flags, socket files, stop).
package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

func TestVolumeGrowsWhileMounted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (mount, loop devices)")
	}
	for _, tool := range []string{"mkfs.xfs", "xfs_growfs", "mkfs.ext4", "losetup", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skip("needs /dev/loop-control")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()

	// The node's disk (ext4, as lab/node.sh makes it).
	disk := filepath.Join(dir, "disk")
	must(t, os.Mkdir(disk, 0o755))
	must(t, run("truncate", "-s", "4G", disk+".img"))
	must(t, run("mkfs.ext4", "-q", "-F", "-m", "0", disk+".img"))
	must(t, run("mount", "-o", "loop", disk+".img", disk))
	t.Cleanup(func() { _ = run("umount", disk) })

	d := &driver{name: "expandable.lab.local", nodeID: "test-node", topologyKey: "lab.local/node", stateDir: filepath.Join(disk, "expandable")}
	must(t, os.MkdirAll(d.stateDir, 0o750))
	endpoint, regSocket := filepath.Join(dir, "csi.sock"), filepath.Join(dir, "plugins_registry", "reg.sock")
	if bin := os.Getenv("LAB_CSI_BIN"); bin != "" {
		startProgram(t, bin, "--endpoint", endpoint, "--registration-socket", regSocket, "--node-id", d.nodeID, "--state-dir", d.stateDir)
	} else {
		s := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
		csi.RegisterIdentityServer(s, d)
		csi.RegisterControllerServer(s, d)
		csi.RegisterNodeServer(s, d)
		r := grpc.NewServer()
		registration.RegisterRegistrationServer(r, &registrar{driver: d, endpoint: endpoint})
		go serve(s, endpoint)
		go serve(r, regSocket)
		t.Cleanup(s.Stop)
		t.Cleanup(r.Stop)
	}
	conn := dial(t, endpoint)
	identity, controller, node := csi.NewIdentityClient(conn), csi.NewControllerClient(conn), csi.NewNodeClient(conn)

	// What kubelet asks on registration.
	info, err := registration.NewRegistrationClient(dial(t, regSocket)).GetInfo(ctx, &registration.InfoRequest{})
	must(t, err)
	if info.Type != registration.CSIPlugin || info.Name != d.name || info.Endpoint != endpoint {
		t.Fatalf("registration info: %v", info)
	}
	plugin, err := identity.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	must(t, err)
	if plugin.Name != d.name {
		t.Fatalf("plugin name %q", plugin.Name)
	}
	// The contract with external-resizer: node expansion without controller expansion makes it take its trivial path.
	ccaps, err := controller.ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
	must(t, err)
	for _, c := range ccaps.Capabilities {
		if c.GetRpc().GetType() == csi.ControllerServiceCapability_RPC_EXPAND_VOLUME {
			t.Fatal("controller must not offer EXPAND_VOLUME")
		}
	}
	ncaps, err := node.NodeGetCapabilities(ctx, &csi.NodeGetCapabilitiesRequest{})
	must(t, err)
	if len(ncaps.Capabilities) != 1 || ncaps.Capabilities[0].GetRpc().GetType() != csi.NodeServiceCapability_RPC_EXPAND_VOLUME {
		t.Fatalf("node capabilities: %v", ncaps.Capabilities)
	}

	capability := &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: "xfs"}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
	create := &csi.CreateVolumeRequest{Name: "pvc-test", CapacityRange: &csi.CapacityRange{RequiredBytes: gib},
		VolumeCapabilities: []*csi.VolumeCapability{capability}}
	created, err := controller.CreateVolume(ctx, create)
	must(t, err)
	again, err := controller.CreateVolume(ctx, create)
	must(t, err)
	v := created.Volume
	if v.CapacityBytes != gib || again.Volume.VolumeId != v.VolumeId || v.AccessibleTopology[0].Segments["lab.local/node"] != "test-node" {
		t.Fatalf("created %v, again %v", v, again.Volume)
	}
	t.Cleanup(func() {
		_, _ = controller.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: v.VolumeId})
	})

	// Kubelet makes the target's parent; the driver makes the target.
	target := filepath.Join(dir, "pod", "volumes", v.VolumeId, "mount")
	must(t, os.MkdirAll(filepath.Dir(target), 0o750))
	publish := &csi.NodePublishVolumeRequest{VolumeId: v.VolumeId, TargetPath: target, VolumeCapability: capability}
	_, err = node.NodePublishVolume(ctx, publish)
	must(t, err)
	t.Cleanup(func() { _ = run("umount", target) })
	_, err = node.NodePublishVolume(ctx, publish) // a retry must not mount it twice
	must(t, err)
	if n, fs := mounts(t, target); n != 1 || fs != "xfs" {
		t.Fatalf("%d mounts at %s, the last of type %q", n, target, fs)
	}
	before := size(t, target)
	t.Logf("df before: %s", df(t, target))
	if before < 900*mib || before > gib {
		t.Fatalf("a 1Gi volume has %d bytes", before)
	}
	data := strings.Repeat("etcd member data\n", 1000)
	must(t, os.WriteFile(filepath.Join(target, "member"), []byte(data), 0o600))

	expanded, err := node.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: v.VolumeId, VolumePath: target,
		CapacityRange: &csi.CapacityRange{RequiredBytes: 2 * gib}})
	must(t, err)
	after := size(t, target)
	t.Logf("df after:  %s", df(t, target))
	if expanded.CapacityBytes != 2*gib || after < before+900*mib || after > 2*gib {
		t.Fatalf("grown to %d bytes (reported %d), from %d", after, expanded.CapacityBytes, before)
	}
	if got, err := os.ReadFile(filepath.Join(target, "member")); err != nil || string(got) != data {
		t.Fatalf("data after growing: %v", err)
	}
	_, err = node.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: v.VolumeId, VolumePath: target,
		CapacityRange: &csi.CapacityRange{RequiredBytes: 2 * gib}}) // a retry finds it grown
	must(t, err)

	// Grown while not mounted: the file now, the filesystem when it is next published.
	device, _ := mountSource(target)
	_, err = node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: v.VolumeId, TargetPath: target})
	must(t, err)
	_, err = node.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: v.VolumeId, VolumePath: target,
		CapacityRange: &csi.CapacityRange{RequiredBytes: 3 * gib}})
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(target), 0o750))
	_, err = node.NodePublishVolume(ctx, publish)
	must(t, err)
	t.Logf("df after growing to 3Gi unmounted and publishing again: %s", df(t, target))
	if grown := size(t, target); grown < after+900*mib || grown > 3*gib {
		t.Fatalf("grown offline to %d bytes", grown)
	}
	if got, err := os.ReadFile(filepath.Join(target, "member")); err != nil || string(got) != data {
		t.Fatalf("data after growing offline: %v", err)
	}
	device, _ = mountSource(target)
	_, err = node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: v.VolumeId, TargetPath: target})
	must(t, err)
	if _, mounted := mountSource(target); mounted {
		t.Fatal("still mounted after unpublish")
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("target left behind: %v", err)
	}
	// The loop device is freed with the mount (autoclear), asynchronously.
	backing := filepath.Join("/sys/block", filepath.Base(device), "loop/backing_file")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(backing); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still attached after unpublish", device)
		}
	}

	_, err = controller.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: v.VolumeId})
	must(t, err)
	if _, err := os.Stat(filepath.Join(d.stateDir, v.VolumeId+".img")); !os.IsNotExist(err) {
		t.Fatalf("image left behind: %v", err)
	}
	_, err = controller.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: v.VolumeId}) // idempotent
	must(t, err)
	_, err = controller.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "../escape", VolumeCapabilities: []*csi.VolumeCapability{capability}})
	if err == nil {
		t.Fatal("a name with a path in it was accepted")
	}
}

// Runs the driver program until the test ends, then stops it as the lab does (SIGTERM) and checks that it removed
// its sockets (kubelet deregisters a driver when its registration socket goes away).
func startProgram(t *testing.T, bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	must(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	sockets := []string{args[1], args[3]}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("driver exited with %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("driver did not stop within 10 s of SIGTERM")
		}
		for _, s := range sockets {
			if _, err := os.Stat(s); err == nil {
				t.Errorf("socket %s left behind", s)
			}
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err1 := os.Stat(sockets[0])
		_, err2 := os.Stat(sockets[1])
		if err1 == nil && err2 == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("driver sockets did not appear within 10 s")
		}
	}
}

func dial(t *testing.T, socket string) *grpc.ClientConn {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	must(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func size(t *testing.T, path string) int64 {
	var s syscall.Statfs_t
	must(t, syscall.Statfs(path, &s))
	return int64(s.Blocks) * s.Bsize
}

func df(t *testing.T, path string) string {
	out, err := exec.Command("df", "-h", "--output=source,fstype,size,used,avail", path).Output()
	must(t, err)
	return strings.Join(strings.Fields(strings.Split(strings.TrimSpace(string(out)), "\n")[1]), " ")
}

// How many mounts there are at path, and the type of the last.
func mounts(t *testing.T, path string) (n int, fsType string) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	must(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			n++
			for i := range f {
				if f[i] == "-" && i+1 < len(f) {
					fsType = f[i+1]
				}
			}
		}
	}
	return n, fsType
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Sizes are whole MiB, at least what mkfs.xfs accepts, and never over the caller's limit.
func TestRequestedSize(t *testing.T) {
	for _, c := range []struct {
		required, limit, def, want int64
		fails                      bool
	}{
		{required: gib, want: gib},
		{required: 0, def: gib, want: gib},
		{required: gib + 1, want: gib + mib},
		{required: 100 * mib, want: minSize},
		{required: 100 * mib, limit: 200 * mib, fails: true},
		{required: 2 * gib, limit: 2 * gib, want: 2 * gib},
	} {
		got, err := requestedSize(&csi.CapacityRange{RequiredBytes: c.required, LimitBytes: c.limit}, c.def)
		if (err != nil) != c.fails || (!c.fails && got != c.want) {
			t.Errorf("requestedSize(%d, limit %d) = %d, %v; want %d (fails: %v)", c.required, c.limit, got, err, c.want, c.fails)
		}
	}
}
