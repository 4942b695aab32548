// Package fpga is the FPGA driver: each device is a child provider of the
// host's compute-node provider with FPGA inventory (one per region or
// virtual function) and traits for vendor, product and loaded function,
// plus OWNER_CYBORG. Programming holds the whole inventory back
// (reserved == total) while the configured command runs, which Cyborg
// itself does not do.
package fpga

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers"
)

// DefaultProgramTimeout bounds one programming run.
const DefaultProgramTimeout = 5 * time.Minute

// Options configures the driver. At least one of File and SysfsRoot is
// a device source.
type Options struct {
	// Host is this host's name: part of each device's provider name and
	// uuid, and the compute-node provider's name unless set below.
	Host string
	// ComputeNodeUUID is the parent provider; when empty the parent is
	// found by ComputeNodeName (default Host).
	ComputeNodeUUID string
	ComputeNodeName string
	// File is a JSON device list ({"devices":[...]}, see Device).
	File string
	// SysfsRoot is a directory with one sub-directory per PCI address
	// holding vendor, device, sriov_totalvfs (or regions) and function.
	SysfsRoot string
	// ProgramCommand is the argv run to program a device; "{device}" and
	// "{image}" in it are replaced. On success its last stdout line, if
	// any, is the loaded function (else the image name).
	ProgramCommand []string
	// ProgramTimeout bounds one run (default 5 minutes).
	ProgramTimeout time.Duration
	// StateFile keeps failed (and in-progress) programmings across
	// restarts; empty: kept in memory only.
	StateFile string
	Logger    *zap.Logger
}

// Device is one FPGA as a source describes it.
type Device struct {
	PCIAddress string `json:"pci_address"`
	Vendor     string `json:"vendor"`  // PCI vendor id, hex ("8086")
	Product    string `json:"product"` // PCI device id, hex ("0b30")
	Function   string `json:"function"`
	Regions    int    `json:"regions"` // regions or VFs; 0 means 1
}

// Programming states reported by Status.
const (
	StateReady       = "ready"
	StateProgramming = "programming"
	StateFailed      = "failed"
)

// Driver reports FPGA devices and programs them. It is safe for
// concurrent use.
type Driver struct {
	opts Options
	log  *zap.Logger

	mu     sync.Mutex
	state  map[string]string // PCI address -> programming state
	errMsg map[string]string // PCI address -> last failure
	loaded map[string]string // PCI address -> function loaded by us
	since  map[string]time.Time
}

var bdfRE = regexp.MustCompile(`^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$`)

// New validates opts.
func New(opts Options) (*Driver, error) {
	if opts.Host == "" {
		return nil, errors.New("fpga: host is required")
	}
	if opts.File == "" && opts.SysfsRoot == "" {
		return nil, errors.New("fpga: a file or a sysfs root is required")
	}
	if opts.ComputeNodeName == "" {
		opts.ComputeNodeName = opts.Host
	}
	if opts.ProgramTimeout <= 0 {
		opts.ProgramTimeout = DefaultProgramTimeout
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	d := &Driver{opts: opts, log: opts.Logger, state: map[string]string{}, errMsg: map[string]string{}, loaded: map[string]string{}, since: map[string]time.Time{}}
	if err := d.loadState(); err != nil {
		return nil, err
	}
	return d, nil
}

// Name implements drivers.Driver.
func (d *Driver) Name() string { return "fpga" }

// Close implements drivers.Driver.
func (d *Driver) Close() error { return nil }

// Devices reads every source.
func (d *Driver) Devices() ([]Device, error) {
	var out []Device
	if d.opts.File != "" {
		f, err := os.Open(d.opts.File)
		if err != nil {
			return nil, fmt.Errorf("fpga: %w", err)
		}
		ds, err := ParseDevices(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, ds...)
	}
	if d.opts.SysfsRoot != "" {
		ds, err := ReadSysfs(d.opts.SysfsRoot)
		if err != nil {
			return nil, err
		}
		out = append(out, ds...)
	}
	slices.SortFunc(out, func(a, b Device) int { return strings.Compare(a.PCIAddress, b.PCIAddress) })
	for i := 1; i < len(out); i++ {
		if out[i].PCIAddress == out[i-1].PCIAddress {
			return nil, fmt.Errorf("fpga: device %s listed twice", out[i].PCIAddress)
		}
	}
	return out, nil
}

// ParseDevices decodes a device file and checks each device.
func ParseDevices(r io.Reader) ([]Device, error) {
	var doc struct {
		Devices []Device `json:"devices"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("fpga: decode devices: %w", err)
	}
	for i := range doc.Devices {
		if err := doc.Devices[i].check(); err != nil {
			return nil, err
		}
	}
	return doc.Devices, nil
}

var hexIDRE = regexp.MustCompile(`^[0-9a-f]{4}$`)

func (dv *Device) check() error {
	dv.PCIAddress = strings.ToLower(dv.PCIAddress)
	dv.Vendor = strings.TrimPrefix(strings.ToLower(dv.Vendor), "0x")
	dv.Product = strings.TrimPrefix(strings.ToLower(dv.Product), "0x")
	switch {
	case !bdfRE.MatchString(dv.PCIAddress):
		return fmt.Errorf("fpga: invalid PCI address %q", dv.PCIAddress)
	case !hexIDRE.MatchString(dv.Vendor) || !hexIDRE.MatchString(dv.Product):
		return fmt.Errorf("fpga: device %s: vendor and product must be 4 hex digits", dv.PCIAddress)
	case dv.Regions < 0 || dv.Regions > 1024:
		return fmt.Errorf("fpga: device %s: regions %d out of range", dv.PCIAddress, dv.Regions)
	}
	if dv.Regions == 0 {
		dv.Regions = 1
	}
	return nil
}

// ReadSysfs reads a sysfs-style tree: <root>/<PCI address>/{vendor,
// device, sriov_totalvfs|regions, function}.
func ReadSysfs(root string) ([]Device, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("fpga: %w", err)
	}
	var out []Device
	for _, e := range entries {
		if !bdfRE.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		read := func(name string) string {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			return strings.TrimSpace(string(b))
		}
		dv := Device{PCIAddress: e.Name(), Vendor: read("vendor"), Product: read("device"), Function: read("function")}
		for _, f := range []string{"sriov_totalvfs", "regions"} {
			if s := read(f); s != "" {
				n, err := strconv.Atoi(s)
				if err != nil {
					return nil, fmt.Errorf("fpga: %s/%s: %w", dir, f, err)
				}
				dv.Regions = n
				break
			}
		}
		if err := dv.check(); err != nil {
			return nil, err
		}
		out = append(out, dv)
	}
	return out, nil
}

// Observe implements drivers.Driver.
func (d *Driver) Observe(ctx context.Context) (*drivers.Tree, error) {
	ds, err := d.Devices()
	if err != nil {
		return nil, err
	}
	tree := &drivers.Tree{}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dv := range ds {
		if fn, ok := d.loaded[dv.PCIAddress]; ok {
			dv.Function = fn
		}
		tree.Providers = append(tree.Providers, d.provider(dv, d.state[dv.PCIAddress]))
	}
	return tree, nil
}

// ProviderName is Cyborg's deployable name: <host>_<PCI address>.
func ProviderName(host, bdf string) string { return host + "_" + bdf }

// ProviderUUID is stable from host and PCI address: Cyborg's
// uuid3(NAMESPACE_DNS, name), so providers match Cyborg's.
func ProviderUUID(host, bdf string) string { return uuid3DNS(ProviderName(host, bdf)) }

// uuid3DNS is RFC 4122 version 3 in the DNS namespace.
func uuid3DNS(name string) string {
	ns := []byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	h := md5.Sum(append(ns, name...))
	h[6] = h[6]&0x0f | 0x30
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

var vendorNames = map[string]string{"8086": "INTEL", "10ee": "XILINX", "1bd4": "INSPUR"}

// Traits are the device's traits: vendor, product, loaded function.
func Traits(dv Device) []string {
	vendor := vendorNames[dv.Vendor]
	if vendor == "" {
		vendor = strings.ToUpper(dv.Vendor)
	}
	out := []string{
		"CUSTOM_FPGA_" + vendor,
		drivers.NormalizeName("FPGA_" + vendor + "_PRODUCT_" + dv.Product),
	}
	if dv.Function != "" {
		out = append(out, FunctionTrait(dv))
	}
	slices.Sort(out)
	return out
}

// FunctionTrait names the loaded function.
func FunctionTrait(dv Device) string {
	vendor := vendorNames[dv.Vendor]
	if vendor == "" {
		vendor = strings.ToUpper(dv.Vendor)
	}
	return drivers.NormalizeName("FPGA_FUNCTION_ID_" + vendor + "_" + dv.Function)
}

func (d *Driver) provider(dv Device, state string) drivers.Provider {
	reason := ""
	switch state {
	case StateProgramming:
		reason = drivers.ReasonProgramming
	case StateFailed:
		reason = drivers.ReasonProgramFailed
	}
	return drivers.Provider{
		UUID:   ProviderUUID(d.opts.Host, dv.PCIAddress),
		Name:   ProviderName(d.opts.Host, dv.PCIAddress),
		Parent: drivers.Ref{UUID: d.opts.ComputeNodeUUID, Name: d.opts.ComputeNodeName},
		Owner:  drivers.OwnerCyborg,
		Inventories: map[string]drivers.Inventory{
			"FPGA": {Total: dv.Regions, MinUnit: 1, MaxUnit: dv.Regions, StepSize: 1, AllocationRatio: 1, Unavailable: reason},
		},
		Traits: Traits(dv),
	}
}

// ErrUnknownDevice: no device has that PCI address.
var ErrUnknownDevice = drivers.ErrUnknownDevice

// TimeoutError: the programming command ran past its timeout.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string { return "programming timed out after " + e.After.String() }

// Timeout reports true, as net.Error does.
func (e *TimeoutError) Timeout() bool { return true }

// ErrBusy: the device is being programmed already.
var ErrBusy = drivers.ErrDeviceBusy

// DeviceProvider returns the provider uuid of the device at bdf.
func (d *Driver) DeviceProvider(bdf string) (string, error) {
	ds, err := d.Devices()
	if err != nil {
		return "", err
	}
	for _, dv := range ds {
		if dv.PCIAddress == strings.ToLower(bdf) {
			return ProviderUUID(d.opts.Host, dv.PCIAddress), nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrUnknownDevice, bdf)
}

// BeginProgramming marks the device as being programmed, so that Observe
// reports it unavailable; it returns the previous state for AbortProgramming.
func (d *Driver) BeginProgramming(bdf string) (string, error) {
	if len(d.opts.ProgramCommand) == 0 {
		return "", errors.New("fpga: no program command is configured")
	}
	bdf = strings.ToLower(bdf)
	d.mu.Lock()
	defer d.mu.Unlock()
	prev := d.state[bdf]
	if prev == StateProgramming {
		return "", fmt.Errorf("%w: %s", ErrBusy, bdf)
	}
	// Kept before the device is touched: a crash mid-run leaves it failed.
	if err := d.setState(bdf, StateProgramming, d.errMsg[bdf]); err != nil {
		d.state[bdf] = prev
		return "", err
	}
	return prev, nil
}

// AbortProgramming restores the state BeginProgramming replaced (the
// reservation could not be made, so nothing ran).
func (d *Driver) AbortProgramming(bdf, prev string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.setState(strings.ToLower(bdf), prev, d.errMsg[strings.ToLower(bdf)]); err != nil {
		d.log.Error("state file not updated after an aborted programming", zap.Error(err))
	}
}

// Program runs the programming command for the device with the timeout.
// On success the device is ready with its new function; on failure or
// timeout it stays failed (and so reserved) until programmed successfully.
func (d *Driver) Program(ctx context.Context, bdf, image string) (string, error) {
	bdf = strings.ToLower(bdf)
	ctx, cancel := context.WithTimeout(ctx, d.opts.ProgramTimeout)
	defer cancel()
	argv := make([]string, len(d.opts.ProgramCommand))
	for i, a := range d.opts.ProgramCommand {
		argv[i] = strings.NewReplacer("{device}", bdf, "{image}", image).Replace(a)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = &TimeoutError{After: d.opts.ProgramTimeout}
		} else {
			err = fmt.Errorf("program %s with %s: %w: %s", bdf, image, err, strings.TrimSpace(stderr.String()))
		}
		if serr := d.setState(bdf, StateFailed, err.Error()); serr != nil {
			d.log.Error("failed programming not kept in the state file; it is lost on restart", zap.String("device", bdf), zap.Error(serr))
		}
		return "", err
	}
	fn := image
	if lines := strings.Fields(stdout.String()); len(lines) > 0 {
		fn = lines[len(lines)-1]
	}
	if serr := d.setState(bdf, StateReady, ""); serr != nil {
		d.log.Error("state file not updated after a successful programming", zap.String("device", bdf), zap.Error(serr))
	}
	d.loaded[bdf] = fn
	return fn, nil
}

// FailedDevices counts devices whose last programming failed.
func (d *Driver) FailedDevices() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, st := range d.state {
		if st == StateFailed {
			n++
		}
	}
	return n
}

// DeviceStatus is one device's programming state.
type DeviceStatus struct {
	Device   string `json:"device"`
	Provider string `json:"provider"`
	State    string `json:"state"`
	Function string `json:"function,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Status reports every known device's state.
func (d *Driver) Status() []DeviceStatus {
	ds, _ := d.Devices()
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]DeviceStatus, 0, len(ds))
	for _, dv := range ds {
		st := d.state[dv.PCIAddress]
		if st == "" {
			st = StateReady
		}
		fn := dv.Function
		if l, ok := d.loaded[dv.PCIAddress]; ok {
			fn = l
		}
		out = append(out, DeviceStatus{Device: dv.PCIAddress, Provider: ProviderUUID(d.opts.Host, dv.PCIAddress), State: st, Function: fn, Error: d.errMsg[dv.PCIAddress]})
	}
	return out
}

// StatusJSON is Status for the agent's status page.
func (d *Driver) StatusJSON() any { return d.Status() }

// The agent finds the capability by a type assertion; this keeps the
// methods in step with its declaration.
var _ drivers.Programmer = (*Driver)(nil)
