//! Intrusive doubly-linked lists over block ids in flat arrays: every block sits in at most
//! one list (a free list or a victim bucket), and moving it is O(1) with no allocation.

pub(crate) const NIL: u32 = u32::MAX;

/// An item's place: its neighbours and its list. The three share one cache line (an item's
/// links are read and written together, at random items of a large array).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Link {
    next: u32,
    prev: u32,
    owner: u32,
}

const UNLINKED: Link = Link {
    next: NIL,
    prev: NIL,
    owner: NIL,
};

pub(crate) struct Lists {
    links: Vec<Link>,
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
}

/// Saved as the three arrays `next`, `prev` and `owner`, then `head`, `tail` and `len`.
impl flashlab_engine::State for Lists {
    fn save(&self, w: &mut flashlab_engine::StateWriter<'_>) {
        for field in [|l: &Link| l.next, |l: &Link| l.prev, |l: &Link| l.owner] {
            self.links.iter().map(field).collect::<Vec<u32>>().save(w);
        }
        self.head.save(w);
        self.tail.save(w);
        self.len.save(w);
    }

    fn load(
        &mut self,
        r: &mut flashlab_engine::StateReader<'_>,
    ) -> Result<(), flashlab_engine::StateError> {
        let mut fields: [Vec<u32>; 3] = Default::default();
        for f in &mut fields {
            f.load(r)?;
        }
        let [next, prev, owner] = fields;
        if next.len() != prev.len() || next.len() != owner.len() {
            return Err(flashlab_engine::StateError::Corrupt {
                what: format!(
                    "block lists of {}, {} and {} links",
                    next.len(),
                    prev.len(),
                    owner.len()
                ),
            });
        }
        self.links = (0..next.len())
            .map(|i| Link {
                next: next[i],
                prev: prev[i],
                owner: owner[i],
            })
            .collect();
        self.head.load(r)?;
        self.tail.load(r)?;
        self.len.load(r)
    }
}

impl Lists {
    /// A loaded set of lists of `items` items and `lists` lists is well formed: every link
    /// in range, every list walked from its head reaches its tail in its length over items
    /// it owns, linked both ways, and no item owned by a list it is not in. O(items + lists),
    /// so a forged cycle is refused instead of walked for ever.
    pub fn check_loaded(&self, items: u32, lists: u32) -> Result<(), String> {
        if self.links.len() != items as usize
            || [&self.head, &self.tail, &self.len]
                .iter()
                .any(|v| v.len() != lists as usize)
        {
            return Err(format!(
                "block lists of {} items and {} lists where the drive has {items} and {lists}",
                self.links.len(),
                self.head.len()
            ));
        }
        let mut listed = 0u64;
        for l in 0..lists as usize {
            let (mut at, mut prev, mut n) = (self.head[l], NIL, 0u32);
            while at != NIL {
                let Some(link) = self.links.get(at as usize) else {
                    return Err(format!("block list {l} links to item {at}, past the drive"));
                };
                if link.owner != l as u32 || link.prev != prev || n >= self.len[l] {
                    return Err(format!(
                        "block list {l} is not linked consistently at item {at}"
                    ));
                }
                (prev, at, n) = (at, link.next, n + 1);
            }
            if n != self.len[l] || self.tail[l] != prev {
                return Err(format!(
                    "block list {l} holds {n} items where its length says {}",
                    self.len[l]
                ));
            }
            listed += u64::from(n);
        }
        let owned = self.links.iter().filter(|k| k.owner != NIL).count() as u64;
        if owned != listed {
            return Err(format!("{owned} blocks name a list, {listed} are in one"));
        }
        Ok(())
    }

    pub fn new(items: u32, lists: u32) -> Lists {
        Lists {
            links: vec![UNLINKED; items as usize],
            head: vec![NIL; lists as usize],
            tail: vec![NIL; lists as usize],
            len: vec![0; lists as usize],
        }
    }

    /// Start loading `item`'s links into the cache (nothing for an item out of range).
    #[inline]
    pub fn prefetch(&self, item: u32) {
        if let Some(link) = self.links.get(item as usize) {
            crate::prefetch::prefetch_read(link);
        }
    }

    #[inline]
    pub fn push_back(&mut self, list: u32, item: u32) {
        debug_assert_eq!(
            self.links[item as usize].owner, NIL,
            "item {item} already listed"
        );
        let (l, i) = (list as usize, item as usize);
        let t = self.tail[l];
        self.links[i] = Link {
            next: NIL,
            prev: t,
            owner: list,
        };
        if t == NIL {
            self.head[l] = item;
        } else {
            self.links[t as usize].next = item;
        }
        self.tail[l] = item;
        self.len[l] += 1;
    }

    #[inline]
    pub fn remove(&mut self, item: u32) {
        let i = item as usize;
        let Link {
            next: n,
            prev: p,
            owner: l,
        } = self.links[i];
        debug_assert_ne!(l, NIL, "item {item} is in no list");
        let l = l as usize;
        if p == NIL {
            self.head[l] = n;
        } else {
            self.links[p as usize].next = n;
        }
        if n == NIL {
            self.tail[l] = p;
        } else {
            self.links[n as usize].prev = p;
        }
        self.links[i] = UNLINKED;
        self.len[l] -= 1;
    }

    #[cfg(test)]
    pub fn pop_front(&mut self, list: u32) -> Option<u32> {
        let h = self.head[list as usize];
        if h == NIL {
            return None;
        }
        self.remove(h);
        Some(h)
    }

    #[inline]
    pub fn pop_back(&mut self, list: u32) -> Option<u32> {
        let t = self.tail[list as usize];
        if t == NIL {
            return None;
        }
        self.remove(t);
        Some(t)
    }

    /// First item of `list`, or [`NIL`].
    #[inline]
    pub fn head(&self, list: u32) -> u32 {
        self.head[list as usize]
    }

    /// The item after `item` in its list, or [`NIL`].
    #[inline]
    pub fn next(&self, item: u32) -> u32 {
        self.links[item as usize].next
    }

    #[inline]
    pub fn len(&self, list: u32) -> u32 {
        self.len[list as usize]
    }

    /// The list holding `item`, or [`NIL`].
    #[inline]
    pub fn owner(&self, item: u32) -> u32 {
        self.links[item as usize].owner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(l: &Lists, list: u32) -> Vec<u32> {
        let mut v = Vec::new();
        let mut i = l.head(list);
        while i != NIL {
            v.push(i);
            i = l.next(i);
        }
        v
    }

    #[test]
    fn push_remove_pop_keep_order_and_lengths() {
        let mut l = Lists::new(6, 2);
        for i in 0..5 {
            l.push_back(i % 2, i);
        }
        assert_eq!(collect(&l, 0), vec![0, 2, 4]);
        assert_eq!(collect(&l, 1), vec![1, 3]);
        l.remove(2);
        assert_eq!(collect(&l, 0), vec![0, 4]);
        l.remove(4);
        assert_eq!(collect(&l, 0), vec![0]);
        l.push_back(0, 2);
        assert_eq!(l.pop_front(0), Some(0));
        assert_eq!(l.pop_front(0), Some(2));
        assert_eq!(l.pop_front(0), None);
        assert_eq!(l.len(1), 2);
        assert_eq!(l.owner(3), 1);
        assert_eq!(l.owner(0), NIL);
    }
}
