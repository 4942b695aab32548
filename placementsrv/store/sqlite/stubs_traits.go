package sqlite

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func (s *Store) ListTraits(ctx context.Context, f store.TraitFilter) ([]store.Trait, error) {
func (s *Store) GetTrait(ctx context.Context, name string) (store.Trait, error) {
func (s *Store) EnsureTrait(ctx context.Context, name string) (store.Trait, bool, error) {
func (s *Store) DeleteTrait(ctx context.Context, name string) error { return errTODO }
func (s *Store) MissingTraits(ctx context.Context, names []string) ([]string, error) {
func (s *Store) ProviderTraits(ctx context.Context, uuid string) (store.Provider, []string, error) {
func (s *Store) SetProviderTraits(ctx context.Context, uuid string, generation int64, traits []string) (store.Provider, []string, error) {
func (s *Store) DeleteProviderTraits(ctx context.Context, uuid string) error { return errTODO }
func (s *Store) ProviderAggregates(ctx context.Context, uuid string) (store.Provider, []string, error) {
func (s *Store) SetProviderAggregates(ctx context.Context, uuid string, generation *int64, aggregates []string) (store.Provider, []string, error) {
