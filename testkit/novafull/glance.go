package novafull

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// glanceImages is the Glance double's store: the one image servers boot
// from, the snapshots shelve makes and deletes, and images a test
// uploads. It speaks Glance v2's wire format for what Nova and
// glanceclient send: POST /v2/images makes a queued image (201),
// PUT …/file stores its data and makes it active (204), PATCH applies a
// JSON patch, DELETE removes it (204), GET lists or shows.
type glanceImages struct {
	mu     sync.Mutex
	images map[string]map[string]any
}

// Attributes Glance owns: a create or patch may not set them.
var glanceReadOnly = []string{"status", "size", "virtual_size", "checksum", "os_hash_algo", "os_hash_value", "created_at", "updated_at", "self", "file", "schema", "locations", "direct_url"}

func newGlanceImages(seed map[string]any) *glanceImages {
	return &glanceImages{images: map[string]map[string]any{seed["id"].(string): seed}}
}

func (g *glanceImages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v2/images")
	id, sub, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case !ok:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "not in the Glance double"})
	case id == "" && r.Method == http.MethodGet:
		g.list(w)
	case id == "" && r.Method == http.MethodPost:
		g.create(w, r)
	case g.images[id] == nil:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "No image found with ID " + id})
	case sub == "file" && r.Method == http.MethodPut:
		g.upload(w, r, g.images[id])
	case sub == "" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, g.images[id])
	case sub == "" && r.Method == http.MethodPatch:
		g.patch(w, r, g.images[id])
	case sub == "" && r.Method == http.MethodDelete:
		if g.images[id]["protected"] == true {
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "Image " + id + " is protected and cannot be deleted."})
			return
		}
		delete(g.images, id)
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"message": "not in the Glance double"})
	}
}

func (g *glanceImages) list(w http.ResponseWriter) {
	all := slices.SortedFunc(maps.Values(g.images), func(a, b map[string]any) int {
		return strings.Compare(a["created_at"].(string)+a["id"].(string), b["created_at"].(string)+b["id"].(string))
	})
	writeJSON(w, http.StatusOK, map[string]any{"images": all, "first": "/v2/images", "schema": "/v2/schemas/images"})
}

// create makes a queued image from the request's attributes, as Glance
// does: Glance's own attributes are refused, the rest kept as given.
func (g *glanceImages) create(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "malformed JSON in request body"})
		return
	}
	for _, k := range glanceReadOnly {
		if _, set := in[k]; set {
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "Attribute '" + k + "' is read-only."})
			return
		}
	}
	id, _ := in["id"].(string)
	if id == "" {
		id = newUUID()
	}
	if g.images[id] != nil {
		writeJSON(w, http.StatusConflict, map[string]string{"message": "Image with identifier " + id + " already exists!"})
		return
	}
	now := time.Now().UTC().Format(time.RFC3339)
	img := map[string]any{
		"id": id, "name": nil, "status": "queued", "visibility": "shared", "protected": false, "os_hidden": false,
		"container_format": nil, "disk_format": nil, "size": nil, "virtual_size": nil, "checksum": nil,
		"os_hash_algo": nil, "os_hash_value": nil, "min_ram": 0, "min_disk": 0, "owner": Project, "tags": []string{},
		"created_at": now, "updated_at": now, "self": "/v2/images/" + id, "file": "/v2/images/" + id + "/file",
		"schema": "/v2/schemas/image",
	}
	maps.Copy(img, in)
	g.images[id] = img
	w.Header().Set("Location", "/v2/images/"+id)
	writeJSON(w, http.StatusCreated, img)
}

// upload stores an image's data: only a queued image takes it.
func (g *glanceImages) upload(w http.ResponseWriter, r *http.Request, img map[string]any) {
	if img["status"] != "queued" {
		writeJSON(w, http.StatusConflict, map[string]string{"message": fmt.Sprintf("Image status transition from %s to saving is not allowed", img["status"])})
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": err.Error()})
		return
	}
	sum, hash := md5.Sum(data), sha512.Sum512(data)
	img["size"], img["checksum"], img["status"] = len(data), hex.EncodeToString(sum[:]), "active"
	img["os_hash_algo"], img["os_hash_value"] = "sha512", hex.EncodeToString(hash[:])
	img["updated_at"] = time.Now().UTC().Format(time.RFC3339)
	w.WriteHeader(http.StatusNoContent)
}

// patch applies Glance's JSON patch (add, replace, remove of top-level
// attributes; glanceclient sends nothing deeper).
func (g *glanceImages) patch(w http.ResponseWriter, r *http.Request, img map[string]any) {
	if ct := r.Header.Get("Content-Type"); ct != "application/openstack-images-v2.1-json-patch" {
		writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"message": "Unsupported Content-Type " + ct})
		return
	}
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if err := json.NewDecoder(r.Body).Decode(&ops); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "malformed JSON in request body"})
		return
	}
	next := maps.Clone(img)
	for _, op := range ops {
		key := strings.TrimPrefix(op.Path, "/")
		if slices.Contains(glanceReadOnly, key) || key == "id" {
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "Attribute '" + key + "' is read-only."})
			return
		}
		switch op.Op {
		case "add", "replace":
			next[key] = op.Value
		case "remove":
			delete(next, key)
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Unrecognized JSON Schema draft op " + op.Op})
			return
		}
	}
	next["updated_at"] = time.Now().UTC().Format(time.RFC3339)
	maps.Copy(img, next)
	for k := range img {
		if _, kept := next[k]; !kept {
			delete(img, k)
		}
	}
	writeJSON(w, http.StatusOK, img)
}

// newUUID is a random (version 4) UUID, as Glance gives a new image.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
