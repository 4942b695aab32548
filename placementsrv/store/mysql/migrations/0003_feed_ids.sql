-- Change ids from an auto-increment key instead of feed_counter's row,
-- which every write held locked until it committed (feed.go). The
-- counter's row gives way to two marks: 'settled', below which every id
-- is a change or a tombstone, and 'pruned', the last id pruning may have
-- deleted. Existing ids were dense, so all of them are settled; pruning
-- kept the last change, so everything below the first one left was
-- pruned. Replicas of an older binary find no counter row and fail their
-- writes rather than mix the two schemes.
ALTER TABLE changes MODIFY id BIGINT NOT NULL AUTO_INCREMENT;

INSERT IGNORE INTO feed_counter (name, value)
    SELECT 'settled', value FROM feed_counter WHERE name = 'changes';

INSERT IGNORE INTO feed_counter (name, value)
    SELECT 'pruned', COALESCE((SELECT MIN(id) - 1 FROM changes), value)
    FROM feed_counter WHERE name = 'changes';

INSERT IGNORE INTO feed_counter (name, value) VALUES ('settled', 0), ('pruned', 0);

DELETE FROM feed_counter WHERE name = 'changes';
