// lab-csi: the lab's CSI driver for volumes that can really grow. Each volume is a sparse XFS image file on the
// node's disk, loop-mounted into the pod; growing it extends the file, tells the loop device its new size and
// grows the mounted filesystem online, so `df` in the pod shows the new size. The upstream sample driver
// (hostpath) only records a size, and local-path volumes are directories with no size at all.
//
// XFS, not ext4: growing a mounted ext4 needs CAP_SYS_RESOURCE (EXT4_IOC_RESIZE_FS), which this sandbox withholds
// even from root (resize2fs: "Permission denied to resize filesystem"); xfs_growfs needs only CAP_SYS_ADMIN.
//
// One process per lab node (controller and node services together, as the external-provisioner's
// --node-deployment mode expects: it creates the image on the disk of the node the pod was scheduled to), plus
// one on the host that only answers the external-resizer's capability questions. It also serves kubelet's
// plugin-registration socket itself, in place of node-driver-registrar (which the module proxy does not serve).
//
// No controller EXPAND_VOLUME capability: the resizer then only records the new size on the PersistentVolume,
// and kubelet calls NodeExpandVolume on the mounted volume, which does all the work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
	// mkfs.xfs refuses filesystems of 300 MB (not MiB) or less; a smaller request gets this much.
	minSize = 300 * mib
)

// Volume IDs are the provisioner's PV names (pvc-<uid>); anything else could name a path outside the state dir.
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

type driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer
	name, nodeID, topologyKey, stateDir string
	// One operation at a time: they are rare and short, and mkfs, mount and xfs_growfs on the same image must not
	// interleave when kubelet or the provisioner retry a call that timed out.
	mu sync.Mutex
}

func main() {
	d := &driver{}
	endpoint := flag.String("endpoint", "", "unix socket path to serve CSI on")
	regSocket := flag.String("registration-socket", "", "kubelet plugin-registration socket to serve (in kubelet's plugins_registry); empty: do not register")
	flag.StringVar(&d.name, "driver-name", "expandable.lab.local", "CSI driver name")
	flag.StringVar(&d.nodeID, "node-id", "", "node name, reported as node ID and topology value")
	flag.StringVar(&d.topologyKey, "topology-key", "lab.local/node", "topology key that pins a volume to its node")
	flag.StringVar(&d.stateDir, "state-dir", "", "directory holding the volumes' image files (on the node's disk)")
	flag.Parse()
	if *endpoint == "" || d.nodeID == "" || d.stateDir == "" {
		log.Fatal("--endpoint, --node-id and --state-dir are required")
	}
	if err := os.MkdirAll(d.stateDir, 0o750); err != nil {
		log.Fatal(err)
	}

	csiServer := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	csi.RegisterIdentityServer(csiServer, d)
	csi.RegisterControllerServer(csiServer, d)
	csi.RegisterNodeServer(csiServer, d)
	servers := []*grpc.Server{csiServer}
	go serve(csiServer, *endpoint)
	if *regSocket != "" {
		// Kubelet watches its plugins_registry directory: a new socket there makes it call GetInfo, then
		// NodeGetInfo on our CSI endpoint, write the driver into CSINode and label the Node with our topology.
		regServer := grpc.NewServer()
		registration.RegisterRegistrationServer(regServer, &registrar{driver: d, endpoint: *endpoint})
		servers = append(servers, regServer)
		go serve(regServer, *regSocket)
	}
	log.Printf("%s serving node %s on %s (state in %s)", d.name, d.nodeID, *endpoint, d.stateDir)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	log.Printf("stopping on %v", <-signals)
	// Stop closes the listeners, which removes the socket files: kubelet then deregisters the driver.
	for _, s := range servers {
		s.Stop()
	}
}

func serve(s *grpc.Server, path string) {
	// A socket left by a killed process would make Listen fail; and kubelet only notices a registration socket
	// that is created anew.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Serve(l); err != nil {
		log.Fatal(err)
	}
}

// Every call but the frequent probes and capability questions goes to the log, with its outcome.
func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	method := info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:]
	if err != nil {
		log.Printf("%s %v: %v", method, req, err)
	} else if !strings.HasSuffix(method, "Capabilities") && method != "Probe" && method != "GetPluginInfo" {
		log.Printf("%s %v: ok", method, req)
	}
	return resp, err
}

type registrar struct {
	registration.UnimplementedRegistrationServer
	driver   *driver
	endpoint string
}

func (r *registrar) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	return &registration.PluginInfo{Type: registration.CSIPlugin, Name: r.driver.name, Endpoint: r.endpoint, SupportedVersions: []string{"1.0.0"}}, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, s *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	if !s.PluginRegistered {
		// Exit, as node-driver-registrar does: a driver kubelet refused serves no pod, and a stopped daemon is what
		// `lab.sh status` and the lab's wait for CSINode report.
		log.Fatalf("kubelet refused the registration: %s", s.Error)
	}
	log.Printf("registered with kubelet")
	return &registration.RegistrationStatusResponse{}, nil
}

// Identity

func (d *driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: d.name, VendorVersion: "1"}, nil
}

func (d *driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	service := func(t csi.PluginCapability_Service_Type) *csi.PluginCapability {
		return &csi.PluginCapability{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: t}}}
	}
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{
		service(csi.PluginCapability_Service_CONTROLLER_SERVICE),
		service(csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS),
	}}, nil
}

func (d *driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// Controller

func (d *driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{{
		Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME}},
	}}}, nil
}

func (d *driver) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if err := checkCapabilities(req.VolumeCapabilities); err != nil {
		return nil, err
	}
	img, err := d.image(req.Name)
	if err != nil {
		return nil, err
	}
	size, err := requestedSize(req.CapacityRange, 1*gib)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// Idempotent by name: a retried call gets the volume the first one made.
	if fi, err := os.Stat(img); err == nil {
		size = fi.Size()
	} else {
		// Made under another name and renamed when complete, so that a crash midway leaves no half-made volume.
		tmp := img + ".tmp"
		if err := makeImage(tmp, size); err != nil {
			os.Remove(tmp)
			return nil, status.Errorf(codes.Internal, "making %s: %v", img, err)
		}
		if err := os.Rename(tmp, img); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId: req.Name, CapacityBytes: size,
		AccessibleTopology: []*csi.Topology{d.topology()},
	}}, nil
}

func makeImage(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	// Sparse: the node's disk only pays for what is written.
	err = errors.Join(f.Truncate(size), f.Close())
	if err != nil {
		return err
	}
	return run("mkfs.xfs", "-q", path)
}

func (d *driver) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	img, err := d.image(req.VolumeId)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.Remove(img); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.DeleteVolumeResponse{}, nil
}

func (d *driver) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	img, err := d.image(req.VolumeId)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(img); err != nil {
		return nil, status.Errorf(codes.NotFound, "no volume %s", req.VolumeId)
	}
	if err := checkCapabilities(req.VolumeCapabilities); err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeCapabilities: req.VolumeCapabilities,
	}}, nil
}

// Node

func (d *driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.nodeID, AccessibleTopology: d.topology()}, nil
}

func (d *driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	// No STAGE_UNSTAGE_VOLUME: each volume has one pod (ReadWriteOnce on one node), so publishing mounts it
	// directly, and NodeExpandVolume gets the pod's mount path.
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{{
		Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: csi.NodeServiceCapability_RPC_EXPAND_VOLUME}},
	}}}, nil
}

func (d *driver) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	if req.TargetPath == "" || req.VolumeCapability == nil {
		return nil, status.Error(codes.InvalidArgument, "target path and volume capability are required")
	}
	if err := checkCapabilities([]*csi.VolumeCapability{req.VolumeCapability}); err != nil {
		return nil, err
	}
	img, err := d.image(req.VolumeId)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := os.Stat(img); err != nil {
		return nil, status.Errorf(codes.NotFound, "no volume %s on node %s", req.VolumeId, d.nodeID)
	}
	// Mounted already: a retry after a call that timed out or failed after the mount; the file system is grown below
	// all the same, so that a retry never reports a volume published smaller than its image.
	if _, mounted := mountSource(req.TargetPath); !mounted {
		if err := os.MkdirAll(req.TargetPath, 0o750); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		// mount(8) sets up the loop device with autoclear: unmounting frees it, so no loop device outlives its mount
		// (`lab.sh down` and a node reboot only unmount).
		options := append([]string{"loop"}, req.VolumeCapability.GetMount().GetMountFlags()...)
		if req.Readonly {
			options = append(options, "ro")
		}
		if err := run("mount", "-t", "xfs", "-o", strings.Join(options, ","), img, req.TargetPath); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	// An image that was grown while unmounted (NodeExpandVolume) gets its filesystem grown now; else a no-op.
	if !req.Readonly {
		if err := run("xfs_growfs", req.TargetPath); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

func (d *driver) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if req.TargetPath == "" {
		return nil, status.Error(codes.InvalidArgument, "target path is required")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, mounted := mountSource(req.TargetPath); mounted {
		if err := run("umount", req.TargetPath); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	if err := os.Remove(req.TargetPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (d *driver) NodeExpandVolume(_ context.Context, req *csi.NodeExpandVolumeRequest) (*csi.NodeExpandVolumeResponse, error) {
	img, err := d.image(req.VolumeId)
	if err != nil {
		return nil, err
	}
	size, err := requestedSize(req.CapacityRange, 0)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	fi, err := os.Stat(img)
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "no volume %s on node %s", req.VolumeId, d.nodeID)
	}
	// Never shrink (the resizer refuses smaller sizes anyway); a repeated call finds the file grown already and
	// only makes sure the filesystem fills it.
	if size < fi.Size() {
		size = fi.Size()
	}
	if err := os.Truncate(img, size); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	device, mounted := mountSource(req.VolumePath)
	if !mounted {
		// Kubelet expands mounted volumes; an unmounted one has its filesystem grown when next published (XFS grows
		// only while mounted).
		return &csi.NodeExpandVolumeResponse{CapacityBytes: size}, nil
	}
	// The mount must be our image's loop device: anything else at that path is not ours to grow.
	backing, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(device), "loop/backing_file"))
	if err != nil || strings.TrimSpace(string(backing)) != img {
		return nil, status.Errorf(codes.FailedPrecondition, "%s is mounted from %s, not from %s", req.VolumePath, device, img)
	}
	// The loop device keeps the size it was set up with until told to read the file's size again.
	if err := run("losetup", "-c", device); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := run("xfs_growfs", req.VolumePath); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.NodeExpandVolumeResponse{CapacityBytes: size}, nil
}

// Helpers

func (d *driver) image(id string) (string, error) {
	if !validID.MatchString(id) {
		return "", status.Errorf(codes.InvalidArgument, "invalid volume name or ID %q", id)
	}
	return filepath.Join(d.stateDir, id+".img"), nil
}

func (d *driver) topology() *csi.Topology {
	return &csi.Topology{Segments: map[string]string{d.topologyKey: d.nodeID}}
}

// Mounted filesystems only, used by one pod on one node: the image can be mounted once, by one kernel.
func checkCapabilities(caps []*csi.VolumeCapability) error {
	if len(caps) == 0 {
		return status.Error(codes.InvalidArgument, "volume capabilities are required")
	}
	for _, c := range caps {
		if c.GetMount() == nil {
			return status.Error(codes.InvalidArgument, "only filesystem volumes are supported, not block")
		}
		if fs := c.GetMount().FsType; fs != "" && fs != "xfs" {
			return status.Errorf(codes.InvalidArgument, "only xfs is supported, not %s", fs)
		}
		switch c.GetAccessMode().GetMode() {
		case csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
			csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER, csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY:
		default:
			return status.Errorf(codes.InvalidArgument, "access mode %v is not supported: volumes are local to one node", c.GetAccessMode().GetMode())
		}
	}
	return nil
}

// The size to make: the required bytes (or the default when none), rounded up to whole MiB.
func requestedSize(r *csi.CapacityRange, def int64) (int64, error) {
	size := r.GetRequiredBytes()
	if size == 0 {
		size = def
	}
	size = max((size+mib-1)/mib*mib, minSize)
	if limit := r.GetLimitBytes(); limit > 0 && size > limit {
		return 0, status.Errorf(codes.OutOfRange, "%d bytes (at least %d) exceed the limit of %d", size, minSize, limit)
	}
	return size, nil
}

// The source of the topmost mount at path (the loop device, for our volumes), if path is a mount point.
func mountSource(path string) (string, bool) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", false
	}
	path = filepath.Clean(path)
	source, found := "", false
	for _, line := range strings.Split(string(data), "\n") {
		// Fields: id parent major:minor root mount-point options [optional...] - fstype source super-options
		fields := strings.Fields(line)
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+2 >= len(fields) || unescape(fields[4]) != path {
			continue
		}
		source, found = fields[sep+2], true // later lines are mounts on top of earlier ones
	}
	return source, found
}

// mountinfo escapes space, tab, newline and backslash as octal.
func unescape(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
