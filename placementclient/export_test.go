package placementclient

// GetProviderAllocations lets the external tests read a provider's
// allocations; the product never needs them.
var GetProviderAllocations = (*Client).getProviderAllocations
