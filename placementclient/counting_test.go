package placementclient_test

import (
	"testing"

	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestRequests: the client counts what it sends by kind, each request
// once, against our server and through a counting proxy in front of it.
func TestRequests(t *testing.T) {
	srv := placementtest.StartOurs(t, placementtest.Options{})
	proxy := placementtest.NewProxy(t, srv.URL)
	c, err := placementclient.New(t.Context(), placementclient.Options{Endpoint: proxy.URL, Token: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := c.CreateProvider(ctx, placementclient.NewProvider{UUID: rootUUID, Name: "host-a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListProviders(ctx, placementclient.ListFilter{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTraits(ctx, rootUUID); err != nil {
		t.Fatal(err)
	}
	before := c.Requests()
	if _, err := c.PutTraits(ctx, rootUUID, 0, []string{"HW_CPU_X86_AVX2"}); err != nil {
		t.Fatal(err)
	}
	// Version discovery and GET traits are reads; the create and PUT
	// traits writes; the list a list.
	want := placementclient.Requests{List: 1, Read: 2, Write: 2}
	if got := c.Requests(); got != want || got.Total() != int64(proxy.Total()) || got.Write != int64(proxy.Writes()) {
		t.Fatalf("Requests() = %+v, want %+v (the proxy saw %v)", got, want, proxy.Counts())
	}
	if d := c.Requests().Sub(before); d != (placementclient.Requests{Write: 1}) || d.ByKind()[placementclient.KindWrite] != 1 {
		t.Fatalf("difference across one PUT = %+v", d)
	}
}
