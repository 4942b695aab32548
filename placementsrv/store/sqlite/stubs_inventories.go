package sqlite

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func (s *Store) GetInventories(ctx context.Context, uuid string) (store.Provider, []store.Inventory, error) {
func (s *Store) SetInventories(ctx context.Context, uuid string, generation int64, invs []store.Inventory) (store.Provider, []store.Inventory, error) {
func (s *Store) AddInventory(ctx context.Context, uuid string, inv store.Inventory) (store.Provider, store.Inventory, error) {
func (s *Store) UpdateInventory(ctx context.Context, uuid string, generation int64, inv store.Inventory) (store.Provider, store.Inventory, error) {
func (s *Store) DeleteInventory(ctx context.Context, uuid, resourceClass string) error {
func (s *Store) DeleteAllInventories(ctx context.Context, uuid string) error { return errTODO }
func (s *Store) ProviderUsages(ctx context.Context, uuid string) (store.Provider, map[string]int64, error) {
func (s *Store) TotalUsages(ctx context.Context, f store.UsageFilter) (map[string]store.TypeUsage, error) {
