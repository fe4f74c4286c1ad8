//! JSON Pointers that continue into a table (spec §15.2): `/t/col` names a column's cells,
//! `/t/col/7` one cell. Columns and cells have no nodes, so these lookups answer with the
//! column (and row) instead; the one step rule is `table_part`.

use super::pointer::{not_an_index, walk, Step, Token};
use super::{Document, Node, Pointer};
use crate::error::{Error, Result};
use crate::table::{ColumnRef, TableRef};
use crate::value::Kind;

impl<'a> Document<'a> {
    /// What a JSON Pointer that continues into a table names (spec §15.2); see
    /// [`Node::pointer_in_table`].
    pub fn pointer_in_table(&self, pointer: &str) -> Result<Option<TablePart<'a>>> {
        self.root().pointer_in_table(pointer)
    }
}

/// A column of a table, or one of its cells, as a JSON Pointer names it (spec §15.2).
#[derive(Debug, Clone)]
pub struct TablePart<'a> {
    /// The table's node.
    pub table: Node<'a>,
    pub column: ColumnRef<'a>,
    /// The cell's row; `None` when the pointer names the whole column.
    pub row: Option<usize>,
}

impl<'a> Node<'a> {
    /// What a JSON Pointer from this node that continues into a table names: the column,
    /// and the row for a cell. `None` when the pointer does not go into a table (it stops
    /// at or before one, meets none, or fails before reaching one: [`Node::pointer`]
    /// reports that); an error when it names nothing inside the table.
    pub fn pointer_in_table(&self, pointer: &str) -> Result<Option<TablePart<'a>>> {
        let prepared = Pointer::parse(pointer)?;
        let mut node = *self;
        let mut steps = prepared.steps().iter();
        while let Some(step) = steps.next() {
            if node.kind() == Kind::Table {
                let (column, row) = table_part(node.table()?, step, &mut steps).map_err(|e| e.with_path(pointer))?;
                return Ok(Some(TablePart { table: node, column, row }));
            }
            match walk(&node, std::iter::once(step)) {
                Ok(next) => node = next,
                Err(_) => return Ok(None),
            }
        }
        Ok(None)
    }
}

/// The one rule for the steps into a table, from `column` on: a column name, then
/// optionally a row index, and nothing after (a cell is a scalar).
pub(super) fn table_part<'a, 't>(
    table: TableRef<'a>,
    column: &Step,
    rest: &mut impl Iterator<Item = &'t Step>,
) -> Result<(ColumnRef<'a>, Option<usize>)> {
    let name = std::str::from_utf8(column.key())
        .map_err(|_| Error::not_found(format!("no column {:?} in the table", String::from_utf8_lossy(column.key()))))?;
    let column = table.get(name)?;
    let Some(row) = rest.next() else { return Ok((column, None)) };
    let i = row.index().ok_or_else(|| not_an_index(row.bytes()))?;
    let cell = column.cell(i)?;
    match rest.next() {
        None => Ok((column, Some(i))),
        Some(next) => {
            let text = String::from_utf8_lossy(next.key());
            Err(Error::not_found(format!("cannot step into {} with \"{text}\"", cell.kind())))
        }
    }
}
