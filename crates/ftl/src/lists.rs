//! Intrusive doubly-linked lists over block ids in flat arrays: every block sits in at most
//! one list (a free list or a victim bucket), and moving it is O(1) with no allocation.

pub(crate) const NIL: u32 = u32::MAX;

pub(crate) struct Lists {
    next: Vec<u32>,
    prev: Vec<u32>,
    owner: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
}

flashlab_engine::impl_state!(Lists {
    next,
    prev,
    owner,
    head,
    tail,
    len
});

impl Lists {
    pub fn new(items: u32, lists: u32) -> Lists {
        Lists {
            next: vec![NIL; items as usize],
            prev: vec![NIL; items as usize],
            owner: vec![NIL; items as usize],
            head: vec![NIL; lists as usize],
            tail: vec![NIL; lists as usize],
            len: vec![0; lists as usize],
        }
    }

    #[inline]
    pub fn push_back(&mut self, list: u32, item: u32) {
        debug_assert_eq!(self.owner[item as usize], NIL, "item {item} already listed");
        let (l, i) = (list as usize, item as usize);
        let t = self.tail[l];
        self.prev[i] = t;
        self.next[i] = NIL;
        if t == NIL {
            self.head[l] = item;
        } else {
            self.next[t as usize] = item;
        }
        self.tail[l] = item;
        self.owner[i] = list;
        self.len[l] += 1;
    }

    #[inline]
    pub fn remove(&mut self, item: u32) {
        let i = item as usize;
        let l = self.owner[i];
        debug_assert_ne!(l, NIL, "item {item} is in no list");
        let l = l as usize;
        let (p, n) = (self.prev[i], self.next[i]);
        if p == NIL {
            self.head[l] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail[l] = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.next[i] = NIL;
        self.prev[i] = NIL;
        self.owner[i] = NIL;
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
        self.next[item as usize]
    }

    #[inline]
    pub fn len(&self, list: u32) -> u32 {
        self.len[list as usize]
    }

    /// The list holding `item`, or [`NIL`].
    #[inline]
    pub fn owner(&self, item: u32) -> u32 {
        self.owner[item as usize]
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
